package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlite"
)

// BenchmarkTableCycle measures one acquire + release of the same name on
// one connection, reporting cycles/s and the statements each cycle sent.
// Compare with BenchmarkSelect1 on the same file: a cycle is two writes.
func BenchmarkTableCycle(b *testing.B) {
	ctx := context.Background()
	db := openDB(b, filepath.Join(b.TempDir(), "bench.db"))
	db.SetMaxOpenConns(1)
	l, err := sqlite.NewTableLocker(db, dialects.Table{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	if err := l.CreateTable(ctx); err != nil {
		b.Fatal(err)
	}
	opts := dialects.Options{Owner: "bench", AtMost: time.Minute}
	warm, err := l.Acquire(ctx, "bench", opts)
	if err != nil {
		b.Fatal(err)
	}
	if err := warm.Release(ctx); err != nil {
		b.Fatal(err)
	}

	before := l.Stats()
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		lease, err := l.Acquire(ctx, "bench", opts)
		if err != nil {
			b.Fatal(err)
		}
		if err := lease.Release(ctx); err != nil {
			b.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	sent := l.Stats().Sub(before)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "cycles/s")
	b.ReportMetric(float64(sent.Sent()+sent.Prepare)/float64(b.N), "statements/op")
}

// BenchmarkSelect1 measures a prepared SELECT 1 on one connection of the
// same kind of database: the round-trip floor a lock cycle is compared to.
func BenchmarkSelect1(b *testing.B) {
	ctx := context.Background()
	db := openDB(b, filepath.Join(b.TempDir(), "bench.db"))
	db.SetMaxOpenConns(1)
	stmt, err := db.PrepareContext(ctx, "SELECT 1")
	if err != nil {
		b.Fatal(err)
	}
	defer stmt.Close()
	var one int
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		if err := stmt.QueryRowContext(ctx).Scan(&one); err != nil || one != 1 {
			b.Fatal(one, err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "selects/s")
}
