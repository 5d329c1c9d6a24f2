package dameng

import (
	"testing"

	"github.com/schedlock/schedlock/dialects/locktable/locktabletest"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// TestPauseSimulated pauses and resumes a lock on the simulated server
// with the table strategy's own statements: a paused lock is refused with
// the pause, a resumed one is taken again.
func TestPauseSimulated(t *testing.T) {
	cfg := configDM8()
	cfg.Tables = presetTables()
	sim := newSim(t, cfg)
	sqlDB, _ := sim.open(t)
	db, err := sqlkit.OpenLegacy(t.Context(), sqlDB, Name)
	if err != nil {
		t.Fatal(err)
	}
	locktabletest.RunPause(t, db)
}
