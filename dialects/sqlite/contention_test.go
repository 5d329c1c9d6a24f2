package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
	"github.com/schedlock/schedlock/dialects/sqlite"
)

// TestContentionMutualExclusion runs 8 workers, each with its own *sql.DB
// and Locker on one file (as separate processes would), over 2 lock names.
// Inside the lock each does an unsynchronised read, 1ms sleep, write of a
// counter: any overlap loses an update, so the counters end exact only
// if the lock excludes. Overlaps and token order are checked directly too.
func TestContentionMutualExclusion(t *testing.T) {
	const (
		workers  = 8
		sections = 100 // successful critical sections per worker
	)
	names := []string{"job-a", "job-b"}
	path := filepath.Join(t.TempDir(), "contended.db")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	setup := openDB(t, path)
	setupLocker, err := sqlite.NewTableLocker(setup, dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	if err := setupLocker.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}

	type guarded struct {
		counter   atomic.Int64 // read and written in two steps: not atomic as a whole
		inside    atomic.Int32 // holders in the critical section right now
		lastToken atomic.Int64
	}
	state := map[string]*guarded{}
	for _, n := range names {
		state[n] = &guarded{}
	}
	perName := make([][2]int64, workers) // successes per worker per name

	lockers := make([]*locktable.Locker, workers)
	for w := range lockers {
		l, err := sqlite.NewTableLocker(openDB(t, path), dialects.Table{})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		lockers[w] = l
	}

	var wg sync.WaitGroup
	errs := make(chan error, workers*sections)
	for w, locker := range lockers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			opts := dialects.Options{Owner: fmt.Sprintf("worker-%d", w), AtMost: 30 * time.Second, Wait: 30 * time.Second, RetryEvery: time.Millisecond}
			for i := range sections {
				ni := (w + i) % len(names)
				g := state[names[ni]]
				lease, err := locker.Acquire(ctx, names[ni], opts)
				if err != nil {
					errs <- fmt.Errorf("worker %d: %w", w, err)
					return
				}
				if n := g.inside.Add(1); n != 1 {
					errs <- fmt.Errorf("worker %d: %d holders of %s at once", w, n, names[ni])
				}
				tok, _ := lease.Token()
				if last := g.lastToken.Load(); tok <= last {
					errs <- fmt.Errorf("worker %d: token %d after %d", w, tok, last)
				}
				g.lastToken.Store(tok)
				v := g.counter.Load()
				time.Sleep(time.Millisecond)
				g.counter.Store(v + 1)
				g.inside.Add(-1)
				if err := lease.Release(ctx); err != nil {
					errs <- fmt.Errorf("worker %d: release: %w", w, err)
					return
				}
				perName[w][ni]++
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}

	var total int64
	for ni, n := range names {
		var want int64
		for w := range workers {
			want += perName[w][ni]
		}
		got := state[n].counter.Load()
		if got != want {
			t.Errorf("%s: counter %d after %d critical sections: updates were lost", n, got, want)
		}
		row, found, err := setupLocker.Inspect(ctx, n)
		if err != nil || !found || row.Token != want {
			t.Errorf("%s: token %d (found %v, %v), want one per acquire = %d", n, row.Token, found, err, want)
		}
		total += got
	}
	if total != workers*sections {
		t.Errorf("total %d, want %d", total, workers*sections)
	}
}

func openDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open(sqlite.DriverName, sqlite.DSN(path))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}
