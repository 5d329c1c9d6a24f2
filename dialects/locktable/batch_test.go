package locktable_test

import (
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable/locktabletest"
)

// RefreshAll and concurrent refreshes on SQLite's batch statement, on
// every preset.
func TestRefreshAllSQLite(t *testing.T) {
	for _, preset := range dialects.Presets() {
		t.Run(preset, func(t *testing.T) {
			locktabletest.CheckRefreshAll(t, newLocker(t, dialects.Table{Preset: preset}))
		})
	}
}
