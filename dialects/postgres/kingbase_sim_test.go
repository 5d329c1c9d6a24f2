package postgres

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
	"github.com/schedlock/schedlock/dialects/locktable"
	"github.com/schedlock/schedlock/dialects/locktable/locktabletest"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// kingbaseBanner is a KingbaseES banner with build as its build number.
func kingbaseBanner(build string) string {
	return "KingbaseES V008R006C007" + build + " on x86_64-pc-linux-gnu, compiled by gcc (GCC) 4.8.5 20150623 (Red Hat 4.8.5-28), 64-bit"
}

// openPgSim starts a simulated server and detects it.
func openPgSim(t *testing.T, cfg pgSimConfig) (*pgSim, *Backend) {
	t.Helper()
	sim := newPgSim(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	db, err := New(ctx, sim.open(t), nil)
	if err != nil {
		t.Fatalf("detect the simulated server: %v", err)
	}
	return sim, db
}

func without(names []string, drop ...string) []string {
	var out []string
	for _, n := range names {
		keep := true
		for _, d := range drop {
			keep = keep && n != d
		}
		if keep {
			out = append(out, n)
		}
	}
	return out
}

// TestKingbaseDetectSimulated drives detection over simulated KingbaseES
// servers: the mode, the catalog names chosen by probe, and the strategy
// that follows from the two-connection proof.
func TestKingbaseDetectSimulated(t *testing.T) {
	tests := []struct {
		name     string
		cfg      pgSimConfig
		mode     string
		catalog  Catalog
		strategy dialects.Strategy
		reason   string // a fragment of the recommendation's reason
	}{
		{"pg mode, pg names", pgSimConfig{Banner: kingbaseBanner("B0101"), Mode: "pg"},
			ModePG, PostgresCatalog, dialects.StrategySession, "passed the two-connection probe"},
		{"oracle mode, sys names only", pgSimConfig{Banner: kingbaseBanner("B0102"), Mode: "oracle", Names: sysNames},
			ModeOracle, sysCatalog, dialects.StrategySession, "sys_try_advisory_lock"},
		{"both names: pg preferred", pgSimConfig{Banner: kingbaseBanner("B0103"), Mode: "pg", Names: append(append([]string{}, sysNames...), pgNames...)},
			ModePG, PostgresCatalog, dialects.StrategySession, "pg_try_advisory_lock"},
		{"mysql mode read by current_setting", pgSimConfig{Banner: kingbaseBanner("B0104"), Mode: "MySQL", ModeBySettingOnly: true},
			ModeMySQL, PostgresCatalog, dialects.StrategySession, "KingbaseES (mysql mode)"},
		{"no mode setting", pgSimConfig{Banner: kingbaseBanner("B0105")},
			"", PostgresCatalog, dialects.StrategySession, "KingbaseES advisory"},
		{"no advisory functions", pgSimConfig{Banner: kingbaseBanner("B0106"), Mode: "oracle", Names: without(sysNames, "sys_try_advisory_lock", "sys_advisory_unlock")},
			ModeOracle, Catalog{Locks: "sys_locks", Activity: "sys_stat_activity", Database: "sys_database", BackendPID: "sys_backend_pid", Terminate: "sys_terminate_backend"},
			dialects.StrategyTable, "neither pg_try_advisory_lock or sys_try_advisory_lock"},
		{"stub advisory functions", pgSimConfig{Banner: kingbaseBanner("B0107"), Mode: "pg", Stub: true},
			ModePG, PostgresCatalog, dialects.StrategyTable, "did not pass the two-connection probe at detection (stub"},
		{"sys locks view, pg functions", pgSimConfig{Banner: kingbaseBanner("B0108"), Mode: "pg", Names: []string{"sys_locks", "pg_stat_activity", "sys_database", "pg_backend_pid", "pg_try_advisory_lock", "pg_advisory_unlock", "sys_terminate_backend"}},
			ModePG, Catalog{Locks: "sys_locks", Activity: "pg_stat_activity", Database: "sys_database", BackendPID: "pg_backend_pid", TryLock: "pg_try_advisory_lock", Unlock: "pg_advisory_unlock", Terminate: "sys_terminate_backend"},
			dialects.StrategySession, "passed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sim, db := openPgSim(t, tt.cfg)
			if db.Info.Product != dialects.ProductKingbase || db.Info.Mode != tt.mode || db.Info.Version != "V008R006C007"+tt.cfg.Banner[len("KingbaseES V008R006C007"):len("KingbaseES V008R006C007")+5] {
				t.Errorf("Info = %+v; want kingbase in mode %q", db.Info, tt.mode)
			}
			if db.facts == nil || db.facts.catalog != tt.catalog {
				t.Errorf("facts = %+v; want the catalog %+v", db.facts, tt.catalog)
			}
			strategy, why := db.Recommend()
			if strategy != tt.strategy || !strings.Contains(why, tt.reason) {
				t.Errorf("Recommend = %s, %q; want %s with %q", strategy, why, tt.strategy, tt.reason)
			}
			_, err := db.SessionLocker()
			if (err == nil) != (tt.strategy == dialects.StrategySession) {
				t.Errorf("SessionLocker error = %v; want one exactly when the recommendation is the table", err)
			}
			if err != nil && !errors.Is(err, dialects.ErrUnsupported) {
				t.Errorf("SessionLocker error = %v; want one matching ErrUnsupported", err)
			}
			if n := sim.heldLocks(); n != 0 {
				t.Errorf("detection left %d advisory locks behind", n)
			}
			sim.assertUnderstood(t)
		})
	}
}

// TestKingbaseConformanceSimulated runs the whole lock-contract suite on a
// simulated KingbaseES in Oracle mode that has only the sys_ names: the
// session strategy on sys_try_advisory_lock (kill with
// sys_terminate_backend included), then the table strategy on every
// preset.
func TestKingbaseConformanceSimulated(t *testing.T) {
	for _, strategy := range dialects.Strategies {
		t.Run(string(strategy), func(t *testing.T) {
			sim, db := openPgSim(t, pgSimConfig{Banner: kingbaseBanner("B02" + string(strategy)[:2]), Mode: "oracle", Names: sysNames, ClockOffset: 90 * time.Millisecond})
			opts := dialecttest.Options{Strategies: []dialects.Strategy{strategy}}
			if strategy == dialects.StrategyTable {
				opts.Tables = presetTables()
			}
			dialecttest.Run(t, db, opts)
			sim.assertUnderstood(t)
			if strategy == dialects.StrategySession {
				if n := sim.heldLocks(); n != 0 {
					t.Errorf("%d advisory locks still held after the suite", n)
				}
				for _, kind := range []string{"session.trylock", "session.holds", "session.find", "session.terminate"} {
					if sim.count(kind) == 0 {
						t.Errorf("the suite sent no %s statement", kind)
					}
				}
			}
		})
	}
}

// TestSessionOpsUseTheDetectedNames proves the names matter: the PostgreSQL
// names on a server that has only the sys_ ones fail loudly (42883), never
// answer "locked".
func TestSessionOpsUseTheDetectedNames(t *testing.T) {
	sim := newPgSim(t, pgSimConfig{Banner: kingbaseBanner("B0301"), Names: sysNames})
	db := sim.open(t)
	conn, err := db.Conn(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if ok, err := (SessionOps{}).TryLock(testCtx(t), conn, "job"); ok || err == nil {
		t.Errorf("pg_try_advisory_lock on a sys_-only server = %v, %v; want an error", ok, err)
	}
	ok, err := (SessionOps{Catalog: &sysCatalog}).TryLock(testCtx(t), conn, "job")
	if !ok || err != nil {
		t.Errorf("sys_try_advisory_lock = %v, %v; want true", ok, err)
	}
}

// TestMutatedServerFailsTheSuite is the mutation check of the simulator
// and the suite together: a server whose advisory unlock frees another
// session's lock, or whose lease-table acquire takes over a live lease,
// must fail the check that guards against it; and a stub lock function
// must be seen as one.
func TestMutatedServerFailsTheSuite(t *testing.T) {
	tests := []struct {
		name     string
		cfg      pgSimConfig
		strategy dialects.Strategy
		check    string
	}{
		{"unlock frees another session's lock", pgSimConfig{Banner: kingbaseBanner("B0401"), Mode: "pg", BrokenUnlock: true},
			dialects.StrategySession, "session.pool-trap"},
		{"acquire takes over a live lease", pgSimConfig{Banner: kingbaseBanner("B0402"), Mode: "pg", TakeOverLive: true},
			dialects.StrategyTable, "table.contend"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sim, db := openPgSim(t, tt.cfg)
			cfg := checks.Config{Backend: db, Strategies: []dialects.Strategy{tt.strategy}, Only: []string{tt.check}}
			if tt.strategy == dialects.StrategyTable {
				cfg.Tables = []dialects.Table{{Preset: dialects.PresetSchedlock}}
			}
			rep, err := checks.Run(testCtx(t), cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, res := range rep.Results {
				if res.ID == tt.check {
					if res.Status != checks.StatusFail {
						t.Errorf("%s on the mutated server: %s (%s); want fail", tt.check, res.Status, res.Detail)
					}
					sim.assertUnderstood(t)
					return
				}
			}
			t.Errorf("%s did not run: %+v", tt.check, rep.Results)
		})
	}
	stub := newPgSim(t, pgSimConfig{Banner: kingbaseBanner("B0403"), Mode: "pg", Stub: true})
	if c := sqlkit.ProbeSessionOps(testCtx(t), stub.open(t), SessionOps{}); c.Status != dialects.StatusStub {
		t.Errorf("probe of a stub = %+v; want stub", c)
	}
}

// TestOneConnectionPoolIsNotProven: with a pool of one connection the
// proof cannot run, so KingbaseES stays on the lease table and says why.
func TestOneConnectionPoolIsNotProven(t *testing.T) {
	sim := newPgSim(t, pgSimConfig{Banner: kingbaseBanner("B0501"), Mode: "pg"})
	sqlDB := sim.open(t)
	sqlDB.SetMaxOpenConns(1)
	db, err := New(testCtx(t), sqlDB, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, why := db.Recommend()
	if s != dialects.StrategyTable || !strings.Contains(why, "unknown: not probed: the connection pool allows one connection") {
		t.Errorf("Recommend = %s, %q; want table, saying the proof could not run", s, why)
	}
	if _, err := db.SessionLocker(); !errors.Is(err, dialects.ErrUnsupported) {
		t.Errorf("SessionLocker error = %v; want ErrUnsupported", err)
	}
}

// TestExpireSimulated: a forced unlock on the simulated KingbaseES and
// openGauss ends a live lease and reports an ended one, on every preset
// table (the simulator runs the Expire UPDATE from its text).
func TestExpireSimulated(t *testing.T) {
	for _, product := range []struct {
		name string
		cfg  pgSimConfig
	}{
		{"kingbase", pgSimConfig{Banner: kingbaseBanner("B0601"), Mode: "pg"}},
		{"opengauss", pgSimConfig{Banner: openGaussBanner, OpenGauss: true}},
	} {
		for _, preset := range dialects.Presets() {
			t.Run(product.name+"/"+preset, func(t *testing.T) {
				sim, db := openPgSim(t, product.cfg)
				tl, err := db.TableLocker(dialects.Table{Preset: preset})
				if err != nil {
					t.Fatal(err)
				}
				if err := tl.CreateTable(t.Context()); err != nil {
					t.Fatal(err)
				}
				locktabletest.CheckExpire(t, tl)
				sim.assertUnderstood(t)
			})
		}
	}
}

// TestRefreshBatchSimulated: the batch refresh statement, run from its
// text by the simulator, renews exactly the rows still held by each lease
// on every preset (locktabletest.CheckRefreshAll), on PostgreSQL,
// KingbaseES and openGauss.
func TestRefreshBatchSimulated(t *testing.T) {
	for _, product := range []struct {
		name string
		cfg  pgSimConfig
	}{
		{"postgres", pgSimConfig{Banner: "PostgreSQL 16.3 on x86_64-pc-linux-gnu"}},
		{"kingbase", pgSimConfig{Banner: kingbaseBanner("B0601"), Mode: "pg"}},
		{"opengauss", pgSimConfig{Banner: openGaussBanner, OpenGauss: true}},
	} {
		for _, preset := range dialects.Presets() {
			t.Run(product.name+"/"+preset, func(t *testing.T) {
				sim, db := openPgSim(t, product.cfg)
				tl, err := db.TableLocker(dialects.Table{Preset: preset})
				if err != nil {
					t.Fatal(err)
				}
				if err := tl.CreateTable(t.Context()); err != nil {
					t.Fatal(err)
				}
				locktabletest.CheckRefreshAll(t, tl.(*locktable.Locker))
				sim.assertUnderstood(t)
				if sim.count("table.refresh-batch") == 0 {
					t.Error("the simulator ran no batch refresh")
				}
			})
		}
	}
}
