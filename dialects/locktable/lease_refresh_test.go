package locktable_test

import (
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlite"
)

// A refresh that fails because the table is gone is remembered, in the
// database's own words, and the expiry that follows quotes it; a refresh
// that succeeds forgets it.
func TestFailedRefreshIsTheExpirysReason(t *testing.T) {
	db := openDB(t)
	l := newLockerWith(t, db, sqlite.Builder{}, dialects.Table{})
	ctx := ctxT(t)
	a := mustAcquire(t, l, "r", dialects.Options{Owner: "a", AtMost: time.Second})
	if err := a.Refresh(ctx); err != nil || dialects.LastRefreshError(a) != nil {
		t.Fatalf("refresh: %v, last refresh error %v", err, dialects.LastRefreshError(a))
	}
	if _, err := db.ExecContext(ctx, "DROP TABLE schedlock"); err != nil {
		t.Fatal(err)
	}
	err := a.Refresh(ctx)
	if err == nil || !strings.Contains(err.Error(), "no such table: schedlock") {
		t.Fatalf("refresh without the table: %v, want the database's error", err)
	}
	if last := dialects.LastRefreshError(a); last == nil || last.Error() != err.Error() {
		t.Fatalf("LastRefreshError = %v, want %v", last, err)
	}
	waitClosed(t, a.Done(), 10*time.Second, "Done of an unrefreshable lease")
	wantErr(t, a.Err(), dialects.ErrLeaseLost)
	if msg := a.Err().Error(); !strings.Contains(msg, "expired") || !strings.Contains(msg, "no such table: schedlock") {
		t.Fatalf("Err = %v, want the expiry with the refresh's reason", a.Err())
	}
}
