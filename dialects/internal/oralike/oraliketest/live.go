package oraliketest

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/claimtable"
	"github.com/schedlock/schedlock/dialects/internal/oralike"
	"github.com/schedlock/schedlock/dialects/locktable/locktabletest"
	"github.com/schedlock/schedlock/dialects/sqlkit"
	"github.com/schedlock/schedlock/internal/golden"
	"github.com/schedlock/schedlock/internal/livetest"
)

// Backend is a dialect's opened backend (what its New returns) as the
// shared tests drive it: the kit's DB, the dialect's engine (session
// locks, their administration, the lease table, the recommendation and
// the probe) and its claim builder.
type Backend interface {
	dialects.Backend
	sqlkit.Engine
	sqlkit.SessionEngine
	sqlkit.AdminEngine
	sqlkit.ProbeEngine
	claimtable.Claimant
	// Kit is the backend's kit DB (sqlkit.Of).
	Kit() *sqlkit.DB
}

// Detect opens the database behind db with the dialect's New, as
// dialects.Open does after connecting, or fails the test.
func Detect[B any](t testing.TB, db *sql.DB, newBackend func(context.Context, *sql.DB, map[string]string) (B, error)) B {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := newBackend(ctx, db, nil)
	if err != nil {
		t.Fatalf("detect: %v", err)
	}
	return b
}

// WithLockers returns a backend on b's pool and Info whose session and
// table lockers are made by session (for the session strategy) and table
// (for the table strategy), every other part of it b's; with both nil it
// is b.
func WithLockers(b Backend, session func(*sql.DB) dialects.Locker, table func(*sql.DB, dialects.Table) dialects.TableLocker) Backend {
	if session == nil && table == nil {
		return b
	}
	r := &replaced{real: b, session: session, table: table}
	r.DB = sqlkit.New(b.Kit().SQL, b.Detected(), nil, r)
	return r
}

// replaced is a backend whose lockers a test replaced: its engine
// methods run real's but for the lockers replaced.
type replaced struct {
	*sqlkit.DB
	real    Backend
	session func(*sql.DB) dialects.Locker
	table   func(*sql.DB, dialects.Table) dialects.TableLocker
}

func (r *replaced) NewSessionLocker(n dialects.SessionNames) (dialects.Locker, error) {
	if r.session == nil {
		return r.real.NewSessionLocker(n)
	}
	return r.session(r.SQL), nil
}

func (r *replaced) NewTableLocker(t dialects.Table) (dialects.TableLocker, error) {
	if r.table == nil {
		return r.real.NewTableLocker(t)
	}
	return r.table(r.SQL, t), nil
}

func (r *replaced) RecommendStrategy() (dialects.Strategy, string) { return r.real.RecommendStrategy() }

func (r *replaced) NewLockAdmin(n dialects.SessionNames) dialects.LockAdmin {
	return r.real.NewLockAdmin(n)
}

func (r *replaced) ProbeDialect(ctx context.Context, opts dialects.ProbeOptions) (dialects.Capabilities, error) {
	return r.real.ProbeDialect(ctx, opts)
}

func (r *replaced) ClaimBuilder() claimtable.Builder { return r.real.ClaimBuilder() }

// LiveDB opens the live server the variable env names, with driver. The
// test is skipped when env is unset and fails when it is set but the
// server does not answer.
func LiveDB(t testing.TB, env, driver string) *sql.DB {
	t.Helper()
	dsn := livetest.DSN(t, env)
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatalf("%s is not a usable %s data source name: %v", env, driver, err)
	}
	t.Cleanup(func() { _ = db.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		t.Fatalf("%s is set but the server does not answer: %v", env, oralike.OneLine(err))
	}
	return db
}

// BenchSelectOne runs query, which reads one integer, b.N times on one
// pinned connection and reports cycles/s: the physical limit of a lock
// cycle.
func BenchSelectOne(b *testing.B, db *sql.DB, query string) {
	ctx := context.Background()
	c, err := db.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	var one int64
	b.ResetTimer()
	for b.Loop() {
		if err := c.QueryRowContext(ctx, query).Scan(&one); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
}

// BenchCycles acquires and releases name b.N times and reports cycles/s.
func BenchCycles(b *testing.B, l dialects.Locker, name string) {
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		lease, err := l.Acquire(ctx, name, dialects.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := lease.Release(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
}

// BenchSessionCycle acquires and releases a session lock b.N times; it is
// skipped on a server without session locks.
func BenchSessionCycle(b *testing.B, db *sqlkit.DB) {
	l, err := db.SessionLocker()
	if errors.Is(err, dialects.ErrUnsupported) {
		b.Skipf("no session strategy on this server: %v", err)
	}
	if err != nil {
		b.Fatal(err)
	}
	BenchCycles(b, l, "schedlock-bench-session")
}

// BenchTableCycles acquires and releases a lock of each of tables b.N
// times, each table created for it and dropped after.
func BenchTableCycles(b *testing.B, db *sqlkit.DB, tables []dialects.Table) {
	for _, t := range tables {
		b.Run(t.Preset, func(b *testing.B) {
			tl, err := db.TableLocker(t)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			if err := tl.CreateTable(ctx); err != nil {
				b.Fatal(err)
			}
			defer func() { _ = tl.(dialects.TableDropper).DropTable(ctx) }()
			BenchCycles(b, tl, "schedlock-bench-table")
		})
	}
}

// CheckGolden compares got with the golden file testdata/file.
func CheckGolden(t *testing.T, file, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", file), got)
}

// GoldenTables pins every statement the table strategy sends, as sections
// renders them for a schema: for every preset (<preset>.golden), for
// ShedLock's table under the schema-qualified name qualified
// (qualified.golden), and for ShedLock's table in a writer time zone
// (shedlock_new_york.golden).
func GoldenTables(t *testing.T, qualified string, sections func(*testing.T, dialects.Schema) []locktabletest.Section) {
	for _, preset := range dialects.Presets() {
		t.Run(preset, func(t *testing.T) {
			CheckGolden(t, preset+".golden", locktabletest.RenderSections(sections(t, PresetSchema(t, preset))))
		})
	}
	t.Run("qualified", func(t *testing.T) {
		s, err := dialects.Table{Preset: dialects.PresetShedlock, Name: qualified}.Schema()
		if err != nil {
			t.Fatal(err)
		}
		CheckGolden(t, "qualified.golden", locktabletest.RenderSections(sections(t, s)))
	})
	t.Run("writer time zone", func(t *testing.T) {
		s, err := locktabletest.ZonedSchema(locktabletest.ZoneGoldenTable, locktabletest.ZoneGoldenAt)
		if err != nil {
			t.Fatal(err)
		}
		CheckGolden(t, "shedlock_new_york.golden", locktabletest.RenderSections(sections(t, s)))
	})
}
