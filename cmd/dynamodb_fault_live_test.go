//go:build unix

package cmd

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dynamodb"
	"github.com/schedlock/schedlock/internal/livetest"
	"github.com/schedlock/schedlock/internal/tcpproxy"
	"github.com/schedlock/schedlock/internal/testnet"
)

// dynamoTable creates a native-layout table of the test's own on dsn's
// endpoint and returns its name.
func dynamoTable(t *testing.T, dsn, prefix string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := dynamodb.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	table := fmt.Sprintf("%s%d", prefix, time.Now().UnixNano())
	l, err := b.LeaseLocker(dialects.Table{Name: table})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.(dialects.TableCreator).CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	return table
}

// dynamoContend acquires name in table on dsn, retrying until it gets
// the lock (creating the table when it is missing), and reports when it
// did and its token.
func dynamoContend(t *testing.T, dsn, table, name string, limit time.Duration) (time.Time, int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit+5*time.Second)
	defer cancel()
	b, err := dynamodb.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	l, err := b.LeaseLocker(dialects.Table{Name: table})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(limit)
	for {
		lease, err := l.Acquire(ctx, name, dialects.Options{AtMost: time.Minute, Wait: time.Until(deadline), RetryEvery: 20 * time.Millisecond, Owner: "contender"})
		if errors.Is(err, dialects.ErrNoTable) && time.Now().Before(deadline) {
			if err := l.(dialects.TableCreator).CreateTable(ctx); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("the contender never got the lock: %v", err)
		}
		at := time.Now()
		tok, _ := lease.Token()
		_ = lease.Release(ctx)
		return at, tok
	}
}

// expectLeaseLost waits for run to exit with the lease-lost code and
// returns its error and stderr.
func expectLeaseLost(t *testing.T, done <-chan result) string {
	t.Helper()
	select {
	case r := <-done:
		var exit *ExitError
		if !errors.As(r.err, &exit) || exit.Code != CodeLeaseLost {
			t.Fatalf("run: %v (stderr %q); want exit %d", r.err, r.stderr, CodeLeaseLost)
		}
		return r.err.Error() + "\n" + r.stderr
	case <-time.After(30 * time.Second):
		t.Fatal("run did not end after it lost DynamoDB")
	}
	return ""
}

// endpointOf is the host:port of a DSN's ?endpoint=.
func endpointOf(t *testing.T, dsn string) string {
	t.Helper()
	_, query, _ := strings.Cut(dsn, "?")
	v, err := url.ParseQuery(query)
	if err != nil || v.Get("endpoint") == "" {
		t.Fatalf("the live DynamoDB DSN has no endpoint= (a local server): the fault tests cut and restart it")
	}
	u, err := url.Parse(v.Get("endpoint"))
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// TestDynamoDBRunConnectionCutStopsChildFirst cuts the connection of `run`
// to DynamoDB (an in-test proxy in front of the live endpoint): the lease
// cannot be refreshed, so run stops its command before the lease end it
// wrote, and a contender connected directly gets the lock only after
// that, with a higher token.
func TestDynamoDBRunConnectionCutStopsChildFirst(t *testing.T) {
	dsn := livetest.DSN(t, livetest.DynamoDB)
	addr := endpointOf(t, dsn)
	p, err := tcpproxy.Start(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	t.Cleanup(p.Restore)
	table := dynamoTable(t, dsn, "fault_cut_")
	direct := dsn + "&x-table=" + table
	via := strings.Replace(dsn, addr, p.Addr(), 1) + "&dial-timeout=500ms&x-table=" + table
	name := "fault-cut"
	started, stopped, done := faultRun(t, via, name)

	p.Cut()
	cutAt := time.Now()
	gotAt, token := dynamoContend(t, strings.Replace(direct, "&x-table="+table, "", 1), table, name, 20*time.Second)
	expectLeaseLost(t, done)
	stoppedAt := readNanos(t, stopped)
	if !stoppedAt.Before(gotAt) {
		t.Fatalf("the command was stopped at %s, after the contender got the lock at %s (cut at %s)", stoppedAt.Format(time.StampMilli), gotAt.Format(time.StampMilli), cutAt.Format(time.StampMilli))
	}
	held, _ := os.ReadFile(started)
	if old, _ := strconv.ParseInt(strings.TrimSpace(string(held)), 10, 64); token <= old {
		t.Errorf("the contender's token %d is not above the lost holder's %d", token, old)
	}
	t.Logf("cut at +0; command stopped at +%s; contender got the lock at +%s", stoppedAt.Sub(cutAt).Round(time.Millisecond), gotAt.Sub(cutAt).Round(time.Millisecond))
}

// dynalite is a dynalite server of the test's own (SCHEDLOCK_TEST_DYNALITE
// is its cli.js, which scripts/services.sh exports beside the live DSN),
// in memory on a fixed free port, so that a restart loses every table.
type dynalite struct {
	cli  string
	port int
	cmd  *exec.Cmd
}

func (d *dynalite) dsn() string {
	return fmt.Sprintf("dynamodb://schedlock:schedlock@us-east-1?endpoint=http://127.0.0.1:%d", d.port)
}

func (d *dynalite) start(t *testing.T) {
	t.Helper()
	d.cmd = exec.Command("node", d.cli, "--host", "127.0.0.1", "--port", strconv.Itoa(d.port), "--createTableMs", "20", "--deleteTableMs", "20")
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "dynalite answers", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		b, err := dynamodb.Open(ctx, d.dsn())
		if err == nil {
			_ = b.Close()
		}
		return err == nil
	})
}

func (d *dynalite) stop() {
	if d.cmd != nil && d.cmd.Process != nil {
		_ = d.cmd.Process.Kill()
		_ = d.cmd.Wait()
		d.cmd = nil
	}
}

// TestDynamoDBRunRestartLosesTheTable restarts an in-memory dynalite while
// `run` holds a lock on it. dynalite keeps nothing across a restart (its
// tables are gone; DynamoDB itself does not lose acknowledged writes, so
// this is a store losing its data, as a Redis without persistence does):
// run's next refresh finds the table gone and stops the command at once,
// exiting with the lease-lost code and saying so, long before the lease
// would have ended; a node that creates the table again can take the
// lock, and its token starts again from 1 (the counter was lost with the
// table — fencing tokens do not survive a lost table).
func TestDynamoDBRunRestartLosesTheTable(t *testing.T) {
	livetest.DSN(t, livetest.DynamoDB)
	cli := os.Getenv("SCHEDLOCK_TEST_DYNALITE")
	if cli == "" {
		t.Fatal("the restart test needs dynalite: SCHEDLOCK_TEST_DYNALITE names its cli.js (scripts/services.sh exports it)")
	}
	d := &dynalite{cli: cli, port: testnet.FreePort(t)}
	d.start(t)
	t.Cleanup(d.stop)
	table := dynamoTable(t, d.dsn(), "fault_restart_")
	name := "fault-restart"
	_, stopped, done := faultRun(t, d.dsn()+"&x-table="+table, name)
	d.stop()
	restartAt := time.Now()
	d.start(t)
	stderr := expectLeaseLost(t, done)
	if !strings.Contains(stderr, "is gone") {
		t.Errorf("run's report %q does not say the table is gone", stderr)
	}
	stoppedAt := readNanos(t, stopped)
	gotAt, token := dynamoContend(t, d.dsn(), table, name, 20*time.Second)
	if token != 1 {
		t.Errorf("token %d on the recreated table, want 1: the counter was lost with the table", token)
	}
	t.Logf("restarted at +0; command stopped at +%s; a node that created the table again got the lock at +%s with token %d",
		stoppedAt.Sub(restartAt).Round(time.Millisecond), gotAt.Sub(restartAt).Round(time.Millisecond), token)
}
