package oracle

import (
	"testing"

	"github.com/schedlock/schedlock/dialects/locktable/locktabletest"
)

// TestPauseSimulated pauses and resumes a lock on the simulated server
// with the table strategy's own statements (MERGE, the owner-checked
// UPDATEs): a paused lock is refused with the pause, a resumed one is
// taken again.
func TestPauseSimulated(t *testing.T) {
	_, db := openSim(t, config19c())
	locktabletest.RunPause(t, db)
}
