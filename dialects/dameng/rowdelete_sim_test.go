package dameng

import (
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable/locktabletest"
)

// TestSysSchedLockRowsSimulated: the sys_sched_lock statements, run from
// their text by the simulator, delete the row on release, keep an early
// release's row until at-least, and delete on a forced unlock.
func TestSysSchedLockRowsSimulated(t *testing.T) {
	_, db := openSim(t, configDM8())
	tl, err := db.TableLocker(dialects.Table{Preset: dialects.PresetSysSchedLock})
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.CreateTable(t.Context()); err != nil {
		t.Fatal(err)
	}
	locktabletest.CheckRowDeletingRelease(t, tl)
}
