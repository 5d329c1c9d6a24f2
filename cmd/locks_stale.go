package cmd

import (
	"fmt"
	"strconv"

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

// staleTSV adds the stale reason, the holder's last refresh and the
// schedule's verdict to the piped table, after every other column.
func staleTSV(t *output.TableData, locks []dialects.LockEntry) {
	t.Header = append(t.Header, "stale_reason", "last_refresh", "schedule", "success_due", "missed")
	for i := range t.Rows {
		e := locks[i]
		missed := ""
		if e.Schedule != "" {
			missed = strconv.FormatBool(e.Missed)
		}
		t.Rows[i] = append(t.Rows[i], e.StaleReason, output.Time(e.LastRefresh), e.Schedule, output.Time(e.SuccessDue), missed)
	}
}
