package dameng

import (
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// TestRoundTripsPerCycle counts the statements one acquire+release cycle
// sends, on the simulator: the table strategy sends the MERGE and the
// release UPDATE (plus one Inspect to read the token, on the native table
// only); the session strategy sends the REQUEST block and the RELEASE
// block.
func TestRoundTripsPerCycle(t *testing.T) {
	const cycles = 20
	measure := func(t *testing.T, cfg simConfig, locker func(*sqlkit.DB) dialects.Locker) float64 {
		t.Helper()
		cfg.Tables = presetTables()
		sim := newSim(t, cfg)
		sqlDB, log := sim.Open(t)
		db, err := New(testCtx(t), sqlDB, nil)
		if err != nil {
			t.Fatal(err)
		}
		l := locker(db.DB)
		ctx := testCtx(t)
		if tl, ok := l.(dialects.TableLocker); ok {
			if err := tl.CreateTable(ctx); err != nil {
				t.Fatal(err)
			}
		}
		// The first cycle on a preset table also reads its name column
		// from the catalog, once per locker: it is not counted.
		if lease, err := l.Acquire(ctx, "cycle", dialects.Options{AtMost: time.Minute}); err == nil {
			if err := lease.Release(ctx); err != nil {
				t.Fatal(err)
			}
		}
		before := len(log.Statements())
		for range cycles {
			lease, err := l.Acquire(ctx, "cycle", dialects.Options{AtMost: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if err := lease.Release(ctx); err != nil {
				t.Fatal(err)
			}
		}
		return float64(len(log.Statements())-before) / cycles
	}
	for _, tt := range []struct {
		preset string
		want   float64
	}{{dialects.PresetSchedlock, 3}, {dialects.PresetShedlock, 2}, {dialects.PresetSysSchedLock, 2}} {
		got := measure(t, configDM8(), func(db *sqlkit.DB) dialects.Locker {
			tl, err := db.TableLocker(dialects.Table{Preset: tt.preset})
			if err != nil {
				t.Fatal(err)
			}
			return tl
		})
		if got != tt.want {
			t.Errorf("table %s: %.1f statements per cycle, want %.0f", tt.preset, got, tt.want)
		}
	}
	got := measure(t, configWithDBMSLock(), func(db *sqlkit.DB) dialects.Locker {
		l, err := db.SessionLocker()
		if err != nil {
			t.Fatal(err)
		}
		return l
	})
	if got != 2 {
		t.Errorf("session: %.1f statements per cycle, want 2", got)
	}
}
