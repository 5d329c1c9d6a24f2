package postgres

import (
	"context"
	"database/sql"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
	"github.com/schedlock/schedlock/dialects/sqlkit"
	"github.com/schedlock/schedlock/internal/benchkit"
)

// The bench harness finds the raw session statements on the opened
// backend (the other baselines are benchops's, asserted beside them).
var _ benchkit.SessionBaseline = (*Backend)(nil)

// The package gives its baselines without linking the bench harness: a
// program that links PostgreSQL for its locks carries no bench.
func TestLinksNoBenchHarness(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/schedlock/schedlock/dialects/postgres").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "github.com/schedlock/schedlock/internal/benchkit" {
			t.Errorf("dialects/postgres links %s", dep)
		}
	}
}

// TestBenchBaselinesLive: the bench harness finds the backend's raw
// baselines and they work on the live server — the hand-written claim
// claims rows without an error, and the holders of held advisory locks
// are counted from pg_locks.
func TestBenchBaselinesLive(t *testing.T) {
	db, err := New(testCtx(t), liveDB(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := benchkit.RunClaims(testCtx(t), db, benchkit.ClaimPlan{Workers: 2, Batch: 5, Strategies: []dialects.ClaimStrategy{dialects.ClaimSkipLocked}, Budget: benchkit.Budget{Cycles: 20}})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range r.Work {
		if w.Raw == nil || w.Raw.Rows == 0 || w.Raw.Errors != 0 || w.Raw.Lost != 0 || !strings.Contains(w.RawStatements[0], "FOR UPDATE SKIP LOCKED") {
			t.Errorf("raw %s: %+v (%q); want rows done by the hand-written statements", w.Work, w.Raw, w.RawStatements)
		}
		if s := w.Strategies[0]; s.Engine.Rows == 0 || s.Engine.Lost != 0 || s.FirstError != "" {
			t.Errorf("engine %s: %+v", w.Work, s)
		}
	}
	locker, err := db.SessionLocker()
	if err != nil {
		t.Fatal(err)
	}
	defer locker.(interface{ Close() error }).Close()
	h, err := benchkit.HoldMany(testCtx(t), db, locker, unique("bench-held-"), 8, dialects.Options{Owner: "bench"})
	if err != nil {
		t.Fatal(err)
	}
	if h.Acquired != 8 || h.ConnectionsSource != benchkit.SourceServer || h.ServerSessions == nil || *h.ServerSessions < 1 || *h.ServerSessions > 8 {
		t.Errorf("held locks: %+v; want 8 counted from pg_locks on 1 to 8 backends", h)
	}
}

// statementCounter counts every statement pgx sends (Query, QueryRow, Exec,
// prepared or not), so benchmarks can report statements per cycle as the
// driver saw them rather than as the code claims.
type statementCounter struct{ n atomic.Int64 }

func (c *statementCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}

func (c *statementCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// countingDB opens the live server with a statement counter on every
// connection.
func countingDB(b *testing.B) (*sql.DB, *statementCounter) {
	b.Helper()
	cfg, err := pgx.ParseConfig(liveDSN(b))
	if err != nil {
		b.Fatal(err)
	}
	counter := &statementCounter{}
	cfg.Tracer = counter
	db := stdlib.OpenDB(*cfg)
	b.Cleanup(func() { _ = db.Close() })
	if err := db.PingContext(testCtx(b)); err != nil {
		b.Fatalf("the server in %s does not answer: %v", dsnEnv, err)
	}
	return db, counter
}

// measure runs cycle b.N times and reports cycles per second and the
// statements each cycle sent.
func measure(b *testing.B, counter *statementCounter, cycle func() error) {
	b.Helper()
	if err := cycle(); err != nil { // warm up: connect, prepare
		b.Fatal(err)
	}
	before := counter.n.Load()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if err := cycle(); err != nil {
			b.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "cycles/s")
	b.ReportMetric(float64(counter.n.Load()-before)/float64(b.N), "statements/op")
}

// BenchmarkSelect1 is the physical limit: one round trip on one connection.
func BenchmarkSelect1(b *testing.B) {
	db, counter := countingDB(b)
	ctx := testCtx(b)
	c, err := db.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	measure(b, counter, func() error {
		var one int
		return c.QueryRowContext(ctx, "SELECT 1").Scan(&one)
	})
}

// BenchmarkSessionCycle acquires and releases an advisory lock through the
// session locker (a pooled connection pinned per lock).
func BenchmarkSessionCycle(b *testing.B) {
	db, counter := countingDB(b)
	ctx := testCtx(b)
	locker, err := backendFor(db, dialects.Info{Product: dialects.ProductPostgreSQL}, nil).NewSessionLocker(dialects.SessionNames{})
	if err != nil {
		b.Fatal(err)
	}
	name := unique("bench-session-")
	measure(b, counter, func() error {
		lease, err := locker.Acquire(ctx, name, dialects.Options{Owner: "bench"})
		if err != nil {
			return err
		}
		return lease.Release(ctx)
	})
}

// BenchmarkTableCycle acquires and releases a lease-table lock (prepared
// upsert, then prepared update) on a fresh native table.
func BenchmarkTableCycle(b *testing.B) {
	db, counter := countingDB(b)
	ctx := testCtx(b)
	locker, err := backendFor(db, dialects.Info{Product: dialects.ProductPostgreSQL}, nil).NewTableLocker(dialects.Table{Name: unique("sl_bench_")})
	if err != nil {
		b.Fatal(err)
	}
	if err := locker.CreateTable(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = db.ExecContext(cctx, "DROP TABLE IF EXISTS "+locker.Schema().Table)
	})
	name := unique("bench-table-")
	measure(b, counter, func() error {
		lease, err := locker.Acquire(ctx, name, dialects.Options{Owner: "bench", AtMost: time.Minute})
		if err != nil {
			return err
		}
		return lease.Release(ctx)
	})
}

// benchLocks is how many locks BenchmarkManySessionLocks holds at once.
const benchLocks = 10000

// BenchmarkManySessionLocks holds 10,000 advisory locks at once through
// one SessionLocker (at most 4 lock connections) and releases them.
func BenchmarkManySessionLocks(b *testing.B) {
	db, _ := countingDB(b)
	l := &sqlkit.SessionLocker{Dialect: Name, DB: db, Ops: SessionOps{}}
	defer l.Close()
	dialecttest.BenchManyLocks(b, l, unique("bench-many-"), benchLocks)
}

// BenchmarkContendedSession: 8 workers, each its own SessionLocker, on one
// name: tries only (a refusal is one round trip), then with a server-side
// wait, beside a raw pg_try_advisory_lock loop on 8 connections.
func BenchmarkContendedSession(b *testing.B) {
	db, _ := countingDB(b)
	newLocker := func() dialects.Locker {
		l := &sqlkit.SessionLocker{Dialect: Name, DB: db, Ops: SessionOps{}}
		b.Cleanup(func() { _ = l.Close() })
		return l
	}
	b.Run("try", func(b *testing.B) { dialecttest.BenchContended(b, 8, newLocker, unique("bench-c-"), 0) })
	b.Run("wait", func(b *testing.B) { dialecttest.BenchContended(b, 8, newLocker, unique("bench-w-"), 10*time.Second) })
	b.Run("raw", func(b *testing.B) {
		ctx := testCtx(b)
		key := Key(unique("bench-raw-"))
		var sections atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		for range 8 {
			c, err := db.Conn(ctx)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			wg.Go(func() {
				for done := 0; done < b.N; {
					var ok bool
					if err := c.QueryRowContext(ctx, "SELECT pg_try_advisory_lock($1)", key).Scan(&ok); err != nil {
						b.Error(err)
						return
					}
					if !ok {
						continue
					}
					if err := c.QueryRowContext(ctx, "SELECT pg_advisory_unlock($1)", key).Scan(&ok); err != nil {
						b.Error(err)
						return
					}
					done++
					sections.Add(1)
				}
			})
		}
		wg.Wait()
		b.ReportMetric(float64(sections.Load())/time.Since(start).Seconds(), "sections/s")
	})
}

// BenchmarkHandover measures the time from a release to the acquire of a
// waiter blocked on the server (another SessionLocker).
func BenchmarkHandover(b *testing.B) {
	db, _ := countingDB(b)
	ctx := testCtx(b)
	holder := &sqlkit.SessionLocker{Dialect: Name, DB: db, Ops: SessionOps{}}
	waiter := &sqlkit.SessionLocker{Dialect: Name, DB: db, Ops: SessionOps{}}
	defer holder.Close()
	defer waiter.Close()
	name := unique("bench-hand-")
	var total time.Duration
	for range b.N {
		lease, err := holder.Acquire(ctx, name, dialects.Options{Wait: 10 * time.Second})
		if err != nil {
			b.Fatal(err)
		}
		got := make(chan time.Time, 1)
		go func() {
			l, err := waiter.Acquire(ctx, name, dialects.Options{Wait: 10 * time.Second})
			got <- time.Now()
			if err == nil {
				_ = l.Release(ctx)
			} else {
				b.Error(err)
			}
		}()
		time.Sleep(20 * time.Millisecond) // the waiter is blocked on the server
		released := time.Now()
		if err := lease.Release(ctx); err != nil {
			b.Fatal(err)
		}
		total += (<-got).Sub(released)
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N)/1000, "ms-handover")
}
