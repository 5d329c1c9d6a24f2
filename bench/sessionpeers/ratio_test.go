package sessionpeers_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	_ "github.com/jackc/pgx/v5/stdlib"

	_ "github.com/schedlock/schedlock/dialects/mysql"
	_ "github.com/schedlock/schedlock/dialects/postgres"
	"github.com/schedlock/schedlock/internal/livetest"
	"github.com/schedlock/schedlock/lock"
)

// cycler is one way of taking and freeing a session lock, measured beside
// the others.
type cycler struct {
	name  string
	cycle func(ctx context.Context) error
}

// interleaveCycles runs b.N rounds, each running every cycler once in a
// random order and timing it on its own, and reports each one's cycles
// per second, its ratio to the first (the raw statements) and its
// allocations per cycle: a load that comes and goes on the machine weighs
// on all of them alike.
func interleaveCycles(b *testing.B, ctx context.Context, cs []cycler) {
	b.Helper()
	for _, c := range cs { // warm up: connect, prepare
		if err := c.cycle(ctx); err != nil {
			b.Fatalf("%s: %v", c.name, err)
		}
	}
	took := make([]time.Duration, len(cs))
	order := make([]int, len(cs))
	for i := range order {
		order[i] = i
	}
	b.ResetTimer()
	for range b.N {
		rand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order {
			start := time.Now()
			if err := cs[i].cycle(ctx); err != nil {
				b.Fatalf("%s: %v", cs[i].name, err)
			}
			took[i] += time.Since(start)
		}
	}
	b.StopTimer()
	for i, c := range cs {
		b.ReportMetric(float64(b.N)/took[i].Seconds(), c.name+"-cycles/s")
		if i > 0 {
			b.ReportMetric(took[0].Seconds()/took[i].Seconds(), c.name+"/raw")
		}
		b.ReportMetric(testing.AllocsPerRun(200, func() { _ = c.cycle(ctx) }), c.name+"-allocs/op")
	}
}

// engineCycle takes and frees name through a lock.Open handle with the
// session strategy.
func engineCycle(b *testing.B, ctx context.Context, dsn, name string) cycler {
	db, err := lock.Open(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	return cycler{"engine", func(ctx context.Context) error {
		lease, err := db.Acquire(ctx, name, lock.Options{})
		if err != nil {
			return err
		}
		return lease.Release(ctx)
	}}
}

// withLeaseTable returns dsn naming a lease table of its own, created
// (and dropped at the end, through driverName on rawDSN) so that lock.Open's
// handles check pauses.
func withLeaseTable(b *testing.B, ctx context.Context, dsn, sep, driverName, rawDSN string) string {
	table := fmt.Sprintf("sl_ratio_%d", rand.Uint32())
	tdsn := dsn + sep + "x-table=" + table
	db, err := lock.Open(ctx, tdsn+"&x-strategy=table")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if err := db.CreateTable(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if sdb, err := sql.Open(driverName, rawDSN); err == nil {
			_, _ = sdb.Exec("DROP TABLE IF EXISTS " + table)
			_ = sdb.Close()
		}
	})
	return tdsn
}

// BenchmarkSessionCycleRatio measures the session cycle (try-acquire and
// release through lock.Open with the session strategy) interleaved with
// the raw statements on the driver's own connection, without and with a
// lease table in the database (whose pauses the handle then checks):
//
//	cd bench/sessionpeers && go test -run '^$' -bench SessionCycleRatio -benchtime 5000x
func BenchmarkSessionCycleRatio(b *testing.B) {
	for _, table := range []bool{false, true} {
		suffix := "/no-table"
		if table {
			suffix = "/lease-table"
		}
		b.Run("postgres"+suffix, func(b *testing.B) {
			dsn := livetest.DSN(b, livetest.Postgres)
			ctx := context.Background()
			if table {
				dsn = withLeaseTable(b, ctx, dsn, "&", "pgx", dsn)
			}
			conn, err := pgx.Connect(ctx, livetest.DSN(b, livetest.Postgres))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = conn.Close(context.Background()) })
			key := rand.Int64()
			raw := cycler{"raw", func(ctx context.Context) error {
				var ok bool
				if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", key).Scan(&ok); err != nil || !ok {
					return fmt.Errorf("try: %v %v", ok, err)
				}
				return conn.QueryRow(ctx, "SELECT pg_advisory_unlock($1)", key).Scan(&ok)
			}}
			interleaveCycles(b, ctx, append([]cycler{raw, engineCycle(b, ctx, dsn, fmt.Sprintf("ratio-%d", rand.Uint32()))}, postgresPeers(b, ctx)...))
		})
		b.Run("mysql"+suffix, func(b *testing.B) {
			raw := livetest.DSN(b, livetest.MySQL)
			ctx := context.Background()
			dsn := raw
			if table {
				dsn = withLeaseTable(b, ctx, raw, "?", "mysql", raw)
			}
			cfg, err := mysql.ParseDSN(raw)
			if err != nil {
				b.Fatal(err)
			}
			cfg.InterpolateParams = true // as lock.Open's pool
			db := sql.OpenDB(mustConnector(b, cfg))
			b.Cleanup(func() { _ = db.Close() })
			c, err := db.Conn(ctx)
			if err != nil {
				b.Fatal(err)
			}
			name := fmt.Sprintf("ratio-raw-%d", rand.Uint32())
			rawCycle := cycler{"raw", func(ctx context.Context) error {
				var got int
				if err := c.QueryRowContext(ctx, "SELECT GET_LOCK(?, 0)", name).Scan(&got); err != nil || got != 1 {
					return fmt.Errorf("GET_LOCK: %d %v", got, err)
				}
				return c.QueryRowContext(ctx, "SELECT RELEASE_LOCK(?)", name).Scan(&got)
			}}
			interleaveCycles(b, ctx, append([]cycler{rawCycle, engineCycle(b, ctx, dsn, fmt.Sprintf("ratio-%d", rand.Uint32()))}, mysqlPeers(b, ctx, raw)...))
		})
	}
}

func mustConnector(b *testing.B, cfg *mysql.Config) driver.Connector {
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return c
}
