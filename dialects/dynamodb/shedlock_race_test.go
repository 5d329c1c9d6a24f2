package dynamodb_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
	"github.com/schedlock/schedlock/dialects/dynamodb"
	"github.com/schedlock/schedlock/dialects/dynamodb/shedlocksim"
	"github.com/schedlock/schedlock/lock"
)

// shedlockTable creates a ShedLock-layout table of the test's own,
// dropped when it ends, and returns its locker.
func shedlockTable(t *testing.T, b *dynamodb.Backend) (dialects.LeaseLocker, string) {
	t.Helper()
	name := checks.NewPrefix() + "_race"
	l, err := b.LeaseLocker(dialects.Table{Preset: dialects.PresetShedlock, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.(dialects.TableCreator).CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = l.(dialects.TableDropper).DropTable(ctx)
	})
	return l, name
}

// TestShedlockPresetExcludesShedLock races the shedlock preset against a
// ShedLock node on one table (shedlocksim: ShedLock's UpdateItem and its
// unguarded unlock).
func TestShedlockPresetExcludesShedLock(t *testing.T) {
	b := openLive(t)
	l, table := shedlockTable(t, b)
	raceShedLock(t, l, shedlocksim.Node{Client: b.Client(), Table: table, Host: "shedlock-node"})
}

// TestShedlockLibraryExcludesShedLock: the same race through lock.Open
// with x-preset=shedlock and x-table.
func TestShedlockLibraryExcludesShedLock(t *testing.T) {
	b := openLive(t)
	_, table := shedlockTable(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := lock.Open(ctx, withQuery(liveDSN(t), "x-preset=shedlock&x-table="+url.QueryEscape(table)))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	raceShedLock(t, libraryLocker{db}, shedlocksim.Node{Client: b.Client(), Table: table, Host: "shedlock-node"})
}

// libraryLocker is a *lock.DB as the engine's Locker.
type libraryLocker struct{ *lock.DB }

func (l libraryLocker) Acquire(ctx context.Context, name string, opts dialects.Options) (dialects.Lease, error) {
	return l.DB.Acquire(ctx, name, lock.Options(opts))
}

// withQuery adds query to the DSN raw.
func withQuery(raw, query string) string {
	if strings.Contains(raw, "?") {
		return raw + "&" + query
	}
	return raw + "?" + query
}

// raceShedLock races l against node (dialecttest.RaceShedLock).
func raceShedLock(t *testing.T, l dialects.Locker, node shedlocksim.Node) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dialecttest.RaceShedLock(ctx, t, l, "job-%d", func(ctx context.Context, name string, atMost time.Duration) (func(context.Context) error, bool, error) {
		held, ok, err := node.Lock(ctx, name, atMost)
		return func(ctx context.Context) error { return node.Unlock(ctx, held, 0) }, ok, err
	})
}
