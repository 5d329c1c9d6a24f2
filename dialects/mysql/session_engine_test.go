package mysql

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// countingDB opens the live server with the driver's defaults (server-side
// prepared statements, no interpolateParams) and counts every packet the
// driver writes: one per command.
func countingDB(t testing.TB, writes *atomic.Int64) *Backend {
	t.Helper()
	db := openLive(t, func(c *mysql.Config) {
		c.InterpolateParams = false
		c.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return countingConn{Conn: conn, writes: writes}, nil
		}
	})
	d, err := New(testContext(t), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestSessionCycleSendsTwoCommands counts the commands of acquire+release
// cycles on the session locker with the driver's default settings: the
// statements are prepared once per lock connection, so a cycle is one
// COM_STMT_EXECUTE for GET_LOCK and one for RELEASE_LOCK.
func TestSessionCycleSendsTwoCommands(t *testing.T) {
	var writes atomic.Int64
	d := countingDB(t, &writes)
	l := &sqlkit.SessionLocker{Dialect: Name, DB: d.SQL, Ops: &SessionOps{Info: d.Info, Database: d.Database}, CheckEvery: time.Hour}
	defer l.Close()
	ctx := testContext(t)
	name := uniqueName("count-")
	cycle := func() {
		t.Helper()
		lease, err := l.Acquire(ctx, name, dialects.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := lease.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	cycle() // opens and prepares the lock connection
	const cycles = 50
	before := writes.Load()
	for range cycles {
		cycle()
	}
	sent := writes.Load() - before
	t.Logf("%d cycles sent %d commands (%.2f per cycle)", cycles, sent, float64(sent)/cycles)
	if sent > 2*cycles {
		t.Errorf("%d cycles sent %d commands; want at most 2 per cycle", cycles, sent)
	}

	// A refusal is one command too: no holder lookup.
	lease, err := l.Acquire(ctx, name, dialects.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release(ctx)
	other := &sqlkit.SessionLocker{Dialect: Name, DB: d.SQL, Ops: &SessionOps{Info: d.Info, Database: d.Database}, CheckEvery: time.Hour}
	defer other.Close()
	if _, err := other.Acquire(ctx, uniqueName("warm-"), dialects.Options{}); err != nil {
		t.Fatal(err)
	}
	before = writes.Load()
	if _, err := other.Acquire(ctx, name, dialects.Options{}); !errors.Is(err, dialects.ErrHeld) {
		t.Fatalf("acquire of a held lock: %v; want ErrHeld", err)
	}
	if sent := writes.Load() - before; sent != 1 {
		t.Errorf("a refused acquire sent %d commands; want 1", sent)
	}
}
