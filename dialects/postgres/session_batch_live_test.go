package postgres

import (
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// Locks taken and released at the same time on one lock connection are
// batched: far fewer statements than locks, every lock held by that one
// session in between (seen from another connection), none left after.
func TestConcurrentLocksAreBatchedLive(t *testing.T) {
	cfg, err := pgx.ParseConfig(liveDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	counter := &statementCounter{}
	cfg.Tracer = counter
	db := stdlib.OpenDB(*cfg)
	t.Cleanup(func() { _ = db.Close() })
	ctx := testCtx(t)
	observer := liveDB(t)
	l := &sqlkit.SessionLocker{Dialect: Name, DB: db, Ops: SessionOps{}, MaxConns: 1}
	defer l.Close()

	const locks, goroutines = 2000, 64
	prefix := unique("batch-")
	names := make([]string, locks)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	held := func() int {
		t.Helper()
		n := 0
		for _, name := range names {
			if h, err := holderOf(ctx, observer, name); err != nil {
				t.Fatal(err)
			} else if h != "" {
				n++
			}
		}
		return n
	}
	leases := make([]dialects.Lease, locks)
	parallelDo(t, locks, goroutines, func(i int) error {
		var err error
		leases[i], err = l.Acquire(ctx, names[i], dialects.Options{})
		return err
	})
	before := counter.n.Load()
	if got := held(); got != locks {
		t.Fatalf("%d of %d locks held after taking them all", got, locks)
	}
	if l.Conns() != 1 {
		t.Fatalf("%d lock connections, want 1", l.Conns())
	}
	taking := before
	t.Logf("%d locks taken with %d statements", locks, taking)
	if taking >= locks/2 {
		t.Errorf("%d statements to take %d locks concurrently: not batched", taking, locks)
	}
	counter.n.Store(0)
	parallelDo(t, locks, goroutines, func(i int) error { return leases[i].Release(ctx) })
	t.Logf("%d locks released with %d statements", locks, counter.n.Load())
	if got := held(); got != 0 {
		t.Fatalf("%d locks still held after releasing them all", got)
	}
}

// parallelDo runs fn(0..n-1) on goroutines goroutines and fails t on the
// first error.
func parallelDo(t *testing.T, n, goroutines int, fn func(i int) error) {
	t.Helper()
	var mu sync.Mutex
	next := 0
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
}
