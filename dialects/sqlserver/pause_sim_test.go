package sqlserver

import (
	"testing"

	"github.com/schedlock/schedlock/dialects/locktable/locktabletest"
)

// TestPauseSimulated pauses and resumes a lock on the simulated server
// with the table strategy's own statements: a paused lock is refused with
// the pause, a resumed one is taken again.
func TestPauseSimulated(t *testing.T) {
	db := newSim().detected(t)
	locktabletest.RunPause(t, db.DB)
}
