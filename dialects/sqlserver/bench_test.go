package sqlserver

import (
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// The benchmarks run against the live server of SCHEDLOCK_TEST_SQLSERVER_DSN
// and compare a lock cycle (acquire + release: two round trips) with the
// physical limit, SELECT 1 on one connection.

// measure runs cycle b.N times and reports cycles per second.
func measure(b *testing.B, cycle func() error) {
	b.Helper()
	if err := cycle(); err != nil { // warm up: connect
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if err := cycle(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "cycles/s")
}

// BenchmarkSelect1 is one round trip on one connection.
func BenchmarkSelect1(b *testing.B) {
	db := liveDB(b)
	ctx := testContext(b)
	c, err := db.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	measure(b, func() error {
		var one int
		return c.QueryRowContext(ctx, "SELECT 1").Scan(&one)
	})
}

// BenchmarkSessionOpsCycle is sp_getapplock + sp_releaseapplock on one
// pinned connection: two round trips.
func BenchmarkSessionOpsCycle(b *testing.B) {
	db := liveDB(b)
	ctx := testContext(b)
	c, err := db.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer discardConn(c)
	ops := &SessionOps{}
	measure(b, func() error {
		if _, err := ops.TryLock(ctx, c, "schedlock-bench-session"); err != nil {
			return err
		}
		_, err := ops.Unlock(ctx, c, "schedlock-bench-session")
		return err
	})
}

// BenchmarkTableCycle is a lease-table acquire + release: two round trips.
func BenchmarkTableCycle(b *testing.B) {
	db := liveDetected(b)
	ctx := testContext(b)
	table := dialects.Table{Name: "schedlock_bench_" + time.Now().Format("150405")}
	l, err := db.TableLocker(table)
	if err != nil {
		b.Fatal(err)
	}
	if err := l.CreateTable(ctx); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = l.(dialects.TableDropper).DropTable(ctx) }()
	measure(b, func() error {
		lease, err := l.Acquire(ctx, "bench", dialects.Options{AtMost: time.Minute})
		if err != nil {
			return err
		}
		return lease.Release(ctx)
	})
}
