package mysql

import (
	"context"
	"database/sql"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// countingConn counts the packets the driver writes: one per command sent
// (query, prepare, execute, close).
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// benchDB opens the live server with every packet written counted in
// writes; interpolate selects client-side parameter interpolation (text
// protocol) instead of server-side prepared statements.
func benchDB(b *testing.B, writes *atomic.Int64, interpolate bool) *sql.DB {
	db := openLive(b, func(c *mysql.Config) {
		c.InterpolateParams = interpolate
		c.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return countingConn{Conn: conn, writes: writes}, nil
		}
	})
	db.SetMaxIdleConns(4)
	return db
}

// report adds cycles/s and statements/op (commands sent per iteration) to
// b's results; writes counts from b.ResetTimer on.
func report(b *testing.B, writes *atomic.Int64) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
	b.ReportMetric(float64(writes.Load())/float64(b.N), "statements/op")
}

// BenchmarkSelect1 is the physical limit: one SELECT 1 round trip on one
// pinned connection.
func BenchmarkSelect1(b *testing.B) {
	var writes atomic.Int64
	db := benchDB(b, &writes, false)
	ctx := context.Background()
	c, err := db.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	var one int
	b.ResetTimer()
	writes.Store(0)
	for range b.N {
		if err := c.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	report(b, &writes)
}

// BenchmarkSessionCycle is one GET_LOCK acquire and release through the
// SessionLocker, with server-side prepared statements (the driver's
// default: prepare, execute, close per statement) and with
// interpolateParams=true (one command per statement).
func BenchmarkSessionCycle(b *testing.B) {
	for _, mode := range []struct {
		name        string
		interpolate bool
	}{{"prepared", false}, {"interpolated", true}} {
		b.Run(mode.name, func(b *testing.B) {
			var writes atomic.Int64
			db := benchDB(b, &writes, mode.interpolate)
			d, err := New(context.Background(), db, nil)
			if err != nil {
				b.Fatal(err)
			}
			ops := &SessionOps{Info: d.Info, Database: d.Database}
			// The lease's liveness check is not part of a cycle.
			l := &sqlkit.SessionLocker{Dialect: Name, DB: db, Ops: ops, CheckEvery: time.Hour}
			benchCycles(b, l, &writes, dialects.Options{})
		})
	}
}

// BenchmarkTableCycle is one acquire and release on the native lease table:
// two prepared statements, prepared once.
func BenchmarkTableCycle(b *testing.B) {
	var writes atomic.Int64
	db := benchDB(b, &writes, false)
	d, err := New(context.Background(), db, nil)
	if err != nil {
		b.Fatal(err)
	}
	tl, err := d.TableLocker(dialects.Table{Name: uniqueName("sl_bench_")})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := tl.CreateTable(ctx); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = tl.(dialects.TableDropper).DropTable(ctx) }()
	benchCycles(b, tl, &writes, dialects.Options{AtMost: time.Minute, Owner: "bench"})
}

func benchCycles(b *testing.B, l dialects.Locker, writes *atomic.Int64, opts dialects.Options) {
	ctx := context.Background()
	name := uniqueName("bench-")
	cycle := func() {
		lease, err := l.Acquire(ctx, name, opts)
		if err != nil {
			b.Fatal(err)
		}
		if err := lease.Release(ctx); err != nil {
			b.Fatal(err)
		}
	}
	cycle() // connect and prepare outside the measurement
	b.ResetTimer()
	writes.Store(0)
	for range b.N {
		cycle()
	}
	b.StopTimer()
	report(b, writes)
}

// benchLocker is a SessionLocker on db for the benchmarks.
func benchLocker(b *testing.B, db *sql.DB) *sqlkit.SessionLocker {
	d, err := New(context.Background(), db, nil)
	if err != nil {
		b.Fatal(err)
	}
	l := &sqlkit.SessionLocker{Dialect: Name, DB: db, Ops: &SessionOps{Info: d.Info, Database: d.Database}}
	b.Cleanup(func() { _ = l.Close() })
	return l
}

// BenchmarkManySessionLocks holds 10,000 GET_LOCK names at once through
// one SessionLocker (at most 4 lock connections) and releases them.
func BenchmarkManySessionLocks(b *testing.B) {
	var writes atomic.Int64
	db := benchDB(b, &writes, false)
	db.SetMaxIdleConns(8)
	dialecttest.BenchManyLocks(b, benchLocker(b, db), uniqueName("bench-many-"), 10000)
}

// BenchmarkContendedSession: 8 workers, each its own SessionLocker, on one
// name: tries only, then with a server-side wait, beside a raw GET_LOCK
// loop on 8 connections.
func BenchmarkContendedSession(b *testing.B) {
	var writes atomic.Int64
	db := benchDB(b, &writes, false)
	newLocker := func() dialects.Locker { return benchLocker(b, db) }
	b.Run("try", func(b *testing.B) { dialecttest.BenchContended(b, 8, newLocker, uniqueName("bench-c-"), 0) })
	b.Run("wait", func(b *testing.B) {
		dialecttest.BenchContended(b, 8, newLocker, uniqueName("bench-w-"), 10*time.Second)
	})
	b.Run("raw", func(b *testing.B) {
		ctx := context.Background()
		name := uniqueName("bench-raw-")
		var sections atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		for range 8 {
			c, err := db.Conn(ctx)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			try, err := c.PrepareContext(ctx, "SELECT GET_LOCK(?, 0)")
			if err != nil {
				b.Fatal(err)
			}
			release, err := c.PrepareContext(ctx, "SELECT RELEASE_LOCK(?)")
			if err != nil {
				b.Fatal(err)
			}
			wg.Go(func() {
				for done := 0; done < b.N; {
					var got int
					if err := try.QueryRowContext(ctx, name).Scan(&got); err != nil {
						b.Error(err)
						return
					}
					if got != 1 {
						continue
					}
					if err := release.QueryRowContext(ctx, name).Scan(&got); err != nil {
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
// waiter blocked in GET_LOCK (another SessionLocker).
func BenchmarkHandover(b *testing.B) {
	var writes atomic.Int64
	db := benchDB(b, &writes, false)
	holder, waiter := benchLocker(b, db), benchLocker(b, db)
	ctx := context.Background()
	name := uniqueName("bench-hand-")
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
