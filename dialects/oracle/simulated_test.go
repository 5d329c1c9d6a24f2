package oracle

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// openSim starts a simulated server with cfg (its Tables defaulting to one
// table per preset) and detects it.
func openSim(t *testing.T, cfg simConfig) (*oraSim, *sqlkit.DB) {
	t.Helper()
	if cfg.Tables == nil {
		cfg.Tables = presetTables()
	}
	sim := newSim(t, cfg)
	sqlDB, _ := sim.open(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	db, err := sqlkit.OpenLegacy(ctx, sqlDB, Name)
	if err != nil {
		t.Fatalf("detect the simulated server: %v", err)
	}
	return sim, db
}

// TestConformanceSimulated runs the whole lock-contract suite against the
// simulated server: the DBMS_LOCK session strategy (including the kill
// check), then the table strategy on every preset. Fresh names are
// inserted with a 5ms window in which a concurrent MERGE wins, so the
// contention and race checks meet ORA-00001 and prove it means "held".
func TestConformanceSimulated(t *testing.T) {
	for _, strategy := range dialects.Strategies {
		t.Run(string(strategy), func(t *testing.T) {
			cfg := config19c()
			cfg.InsertWindow = 5 * time.Millisecond
			sim, db := openSim(t, cfg)
			opts := dialecttest.Options{Strategies: []dialects.Strategy{strategy}}
			if strategy == dialects.StrategyTable {
				opts.Tables = presetTables()
			}
			dialecttest.Run(t, db, opts)
			sim.AssertUnderstood(t)
			switch strategy {
			case dialects.StrategyTable:
				dups, merges := sim.Counts()
				if dups == 0 {
					t.Errorf("no MERGE of %d met ORA-00001: the duplicate-key path was not exercised", merges)
				}
				t.Logf("%d MERGEs, %d answered ORA-00001 and were reported as held", merges, dups)
			case dialects.StrategySession:
				if n := sim.HeldLocks(); n != 0 {
					t.Errorf("%d DBMS_LOCK locks still held after the suite", n)
				}
			}
		})
	}
}

// TestTimeZoneSimulated: on the simulated server, ShedLock's table in a
// New York writer time zone passes the whole lock contract, and a row a
// New York JVM wrote (zone-less local times; the simulator keeps instants
// and shows them as New York's wall-clock time) reads held until its
// lease ends and is not taken.
func TestTimeZoneSimulated(t *testing.T) {
	table := dialects.Table{Preset: dialects.PresetShedlock, TimeZone: "America/New_York"}
	cfg := config19c()
	cfg.Tables = []dialects.Table{table}
	sim, db := openSim(t, cfg)
	dialecttest.Run(t, db, dialecttest.Options{Strategies: []dialects.Strategy{dialects.StrategyTable}, Tables: []dialects.Table{table}})
	sim.AssertUnderstood(t)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tl, err := db.TableLocker(table)
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	sim.Mu.Lock()
	sim.Tables["SHEDLOCK"].Rows["report"] = &simRow{Name: "report", Owner: "jvm-ny", LockedAt: now, Until: now.Add(10 * time.Minute)}
	sim.Mu.Unlock()
	row, found, err := tl.Inspect(ctx, "report")
	if err != nil || !found || row.Expired() || !row.Until.Equal(now.Add(10*time.Minute)) {
		t.Fatalf("the JVM's row = %+v, %v, %v; want held until %s", row, found, err, now.Add(10*time.Minute))
	}
	if _, err := tl.Acquire(ctx, "report", dialects.Options{Owner: "schedlock", AtMost: time.Minute}); !errors.Is(err, dialects.ErrHeld) {
		t.Fatalf("acquire of the JVM's live lock: %v, want held", err)
	}
	sim.AssertUnderstood(t)
}
