package sqlkit

import (
	"fmt"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// FutureLockSlack is how far a table row's locked_at may be ahead of the
// database's now before ListLocks warns: more than the clock skew between
// hosts that write their own clock (ShedLock without usingDbTime()), less
// than any time zone's offset from UTC.
const FutureLockSlack = 5 * time.Minute

// futureLockNote is a listing note when a table row was locked later than
// the database's now by more than FutureLockSlack: its writer most likely
// wrote zone-less local time of a zone east of UTC (ShedLock without
// usingDbTime() or forceUtcTimeZone()), so its lease ends later than it
// shows, and writers west of UTC have rows that look expired while held.
// It names the first such row and counts the others; "" when there is none.
func futureLockNote(locks []dialects.LockEntry) string {
	var first *dialects.LockEntry
	others := 0
	for i := range locks {
		e := &locks[i]
		if e.Strategy != dialects.StrategyTable || e.LockedAt.IsZero() || e.DBNow.IsZero() || e.LockedAt.Sub(e.DBNow) <= FutureLockSlack {
			continue
		}
		if first == nil {
			first = e
		} else {
			others++
		}
	}
	if first == nil {
		return ""
	}
	ahead := first.LockedAt.Sub(first.DBNow).Round(time.Minute)
	note := fmt.Sprintf("lock %q in table %s was locked at %s, %s ahead of the database's now", first.Name, first.Source, first.LockedAt.UTC().Format(time.RFC3339), ahead)
	if others > 0 {
		note += fmt.Sprintf(" (and %d more rows)", others)
	}
	return note + ": its writer stores local time, not UTC (ShedLock needs usingDbTime() or forceUtcTimeZone()); such leases are not read as written, see docs/strategies.md"
}
