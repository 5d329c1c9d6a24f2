package sqlkit_test

import (
	"context"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// A ShedLock row written in Tokyo's local time (UTC+9, as a JVM there
// writes without usingDbTime() or forceUtcTimeZone()) is locked hours after
// the database's now: ListLocks says so, naming the row; rows in UTC do not
// raise it.
func TestListLocksWarnsOfLockedAtAheadOfNow(t *testing.T) {
	ctx := context.Background()
	db := openSQLiteAdmin(t)
	execAll(t, db.SQL,
		shedlockSQLite,
		`INSERT INTO shedlock VALUES ('utc-job', strftime('%Y-%m-%d %H:%M:%f', 'now', '+10 minutes'), strftime('%Y-%m-%d %H:%M:%f', 'now', '-1 minutes'), 'host-a')`,
		`INSERT INTO shedlock VALUES ('skewed-job', strftime('%Y-%m-%d %H:%M:%f', 'now', '+11 minutes'), strftime('%Y-%m-%d %H:%M:%f', 'now', '+1 minutes'), 'host-s')`,
	)
	l, err := db.ListLocks(ctx, dialects.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range l.Notes {
		if strings.Contains(n, "ahead of the database's now") {
			t.Fatalf("rows within %s of now raised %q", sqlkit.FutureLockSlack, n)
		}
	}

	execAll(t, db.SQL,
		`INSERT INTO shedlock VALUES ('tokyo-job', strftime('%Y-%m-%d %H:%M:%f', 'now', '+9 hours', '+10 minutes'), strftime('%Y-%m-%d %H:%M:%f', 'now', '+9 hours'), 'host-t')`,
	)
	l, err = db.ListLocks(ctx, dialects.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var note string
	for _, n := range l.Notes {
		if strings.Contains(n, "ahead of the database's now") {
			note = n
		}
	}
	for _, want := range []string{`lock "tokyo-job" in table shedlock`, "9h0m0s ahead", "usingDbTime()", "forceUtcTimeZone()", "docs/strategies.md"} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q does not say %q (notes %q)", note, want, l.Notes)
		}
	}
	if strings.Contains(note, "more rows") {
		t.Errorf("one row ahead counted as several: %q", note)
	}
}
