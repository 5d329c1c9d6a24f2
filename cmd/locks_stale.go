package cmd

import (
	"fmt"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/output"
)

// staleNotes are the listing's notes on its stale locks: why each is
// stale and that unlock frees it without --force.
func staleNotes(locks []dialects.LockEntry) []string {
	var out []string
	for _, e := range locks {
		if e.State != dialects.StateStale {
			continue
		}
		out = append(out, fmt.Sprintf("lock %q in %s is stale (%s): its holder is gone; schedlock unlock %s frees it without --force",
			e.Name, e.Source, e.StaleReason, shellWord(e.Name)))
	}
	return out
}

// staleTSV adds the stale reason and the holder's last refresh to the
// piped table, after every other column.
func staleTSV(t *output.TableData, locks []dialects.LockEntry) {
	t.Header = append(t.Header, "stale_reason", "last_refresh")
	for i := range t.Rows {
		t.Rows[i] = append(t.Rows[i], locks[i].StaleReason, output.Time(locks[i].LastRefresh))
	}
}
