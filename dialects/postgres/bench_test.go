package postgres

import (
	"context"
	"database/sql"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/schedlock/schedlock/dialects"
)

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
	locker, err := NewSessionLocker(db, dialects.Info{Product: dialects.ProductPostgreSQL})
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
	locker, err := NewTableLocker(db, dialects.Info{Product: dialects.ProductPostgreSQL}, dialects.Table{Name: unique("sl_bench_")})
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
