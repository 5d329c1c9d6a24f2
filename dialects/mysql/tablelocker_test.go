package mysql

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
	"github.com/schedlock/schedlock/dialects/locktable/locktabletest"
)

// liveLocker returns the table locker of a fresh table of preset, created
// with CreateTable and dropped at the end of the test.
func liveLocker(t *testing.T, d *Backend, preset string) *locktable.Locker {
	t.Helper()
	tl, err := d.TableLocker(dialects.Table{Preset: preset, Name: uniqueName("sl_" + preset[:4] + "_")})
	if err != nil {
		t.Fatal(err)
	}
	l, ok := tl.(*locktable.Locker)
	if !ok {
		t.Fatalf("table locker is a %T, want *locktable.Locker", tl)
	}
	if err := l.CreateTable(testContext(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.DropTable(testContext(t)) })
	return l
}

// TestTableLockerLive drives the lease-table engine with this dialect's
// SQL on every preset.
func TestTableLockerLive(t *testing.T) {
	d := openDetected(t)
	for _, preset := range dialects.Presets() {
		t.Run(preset, func(t *testing.T) {
			ctx := testContext(t)
			l := liveLocker(t, d, preset)
			hasToken := preset == dialects.PresetSchedlock
			opts := dialects.Options{Owner: "host-a:1:aaaa", AtMost: time.Minute}

			lease, err := l.Acquire(ctx, "report", opts)
			if err != nil {
				t.Fatal(err)
			}
			if tok, ok := lease.Token(); ok != hasToken || (hasToken && tok != 1) {
				t.Errorf("Token() = %d, %v", tok, ok)
			}
			row, found, err := l.Inspect(ctx, "report")
			if err != nil || !found {
				t.Fatalf("Inspect = %v, %v", found, err)
			}
			if row.Owner != opts.Owner || row.Expired() {
				t.Errorf("row %+v: want owner %s, live", row, opts.Owner)
			}
			if lease := row.Until.Sub(row.LockedAt); lease != time.Minute {
				t.Errorf("row lease %s, want 1m (until - locked_at)", lease)
			}
			if skew := row.DBNow.Sub(row.LockedAt); skew < 0 || skew > 5*time.Second {
				t.Errorf("locked_at %s is not just before the database's now %s", row.LockedAt, row.DBNow)
			}
			if skew := time.Since(row.DBNow); skew < -time.Minute || skew > time.Minute {
				t.Errorf("database now %s is far from the host clock: times are not read as UTC", row.DBNow)
			}

			// Another owner is refused and told who holds it until when.
			_, err = l.Acquire(ctx, "report", dialects.Options{Owner: "host-b:2:bbbb"})
			var held *dialects.HeldError
			if !errors.As(err, &held) || held.Holder != opts.Owner || !held.Until.Equal(row.Until) {
				t.Fatalf("second Acquire = %v; want a HeldError naming %s until %s", err, opts.Owner, row.Until)
			}

			// Wrong owner: refused, the row unchanged.
			other, err := l.Handle("report", "host-b:2:bbbb", 0, dialects.Options{AtMost: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			if err := other.Refresh(ctx); !errors.Is(err, dialects.ErrNotOwner) {
				t.Errorf("Refresh by another owner = %v; want ErrNotOwner", err)
			}
			if err := other.Release(ctx); !errors.Is(err, dialects.ErrNotOwner) {
				t.Errorf("Release by another owner = %v; want ErrNotOwner", err)
			}
			if after, _, _ := l.Inspect(ctx, "report"); after.Owner != row.Owner || !after.Until.Equal(row.Until) || after.Token != row.Token || !after.LockedAt.Equal(row.LockedAt) {
				t.Errorf("row changed by another owner: %+v, was %+v", after, row)
			}

			// Refresh twice in a row: both succeed.
			for i := range 2 {
				if err := lease.Refresh(ctx); err != nil {
					t.Fatalf("Refresh %d: %v", i+1, err)
				}
			}
			if err := lease.Release(ctx); err != nil {
				t.Fatalf("Release: %v", err)
			}
			if err := lease.Release(ctx); !errors.Is(err, dialects.ErrLeaseLost) {
				t.Errorf("second Release = %v; want ErrLeaseLost", err)
			}
			next, err := l.Acquire(ctx, "report", dialects.Options{Owner: "host-b:2:bbbb"})
			if err != nil {
				t.Fatalf("Acquire after release: %v", err)
			}
			if tok, ok := next.Token(); hasToken && (!ok || tok != 2) {
				t.Errorf("token after takeover = %d, %v; want 2", tok, ok)
			}

			// Force-unlock ends the new owner's lease; its Refresh then fails.
			if ok, err := l.Expire(ctx, "report"); err != nil || !ok {
				t.Fatalf("Expire = %v, %v", ok, err)
			}
			if ok, err := l.Expire(ctx, "report"); err != nil || ok {
				t.Errorf("Expire of an expired lease = %v, %v; want false", ok, err)
			}
			if err := next.Refresh(ctx); !errors.Is(err, dialects.ErrLeaseLost) && !errors.Is(err, dialects.ErrNotOwner) {
				t.Errorf("Refresh after force-unlock = %v; want the lease lost", err)
			}

			long := strings.Repeat("x", 300) + "é"
			if preset != dialects.PresetSchedlock {
				// A preset table stores names as they are: a name too long
				// for its column is refused with the column's width.
				_, err := l.Acquire(ctx, long, opts)
				var tooLong *dialects.NameTooLongError
				if !errors.As(err, &tooLong) || tooLong.Column.Width != (&Builder{}).MaxNameRunes(l.Schema()) {
					t.Fatalf("Acquire of a 301-character name = %v; want a NameTooLongError with the column's width", err)
				}
				// sys_sched_lock's forced unlock deleted the row of report.
				want := map[string]int{dialects.PresetShedlock: 1, dialects.PresetSysSchedLock: 0}[preset]
				if rows, err := l.List(ctx); err != nil || len(rows) != want {
					t.Errorf("List = %+v, %v; want %d rows", rows, err, want)
				}
				return
			}
			// On the native table a name too long for the column is
			// mapped, and still a lock.
			ll, err := l.Acquire(ctx, long, opts)
			if err != nil {
				t.Fatalf("Acquire of a 301-character name: %v", err)
			}
			if _, err := l.Acquire(ctx, long, dialects.Options{Owner: "host-b:2:bbbb"}); !errors.Is(err, dialects.ErrHeld) {
				t.Errorf("second Acquire of the long name = %v; want ErrHeld", err)
			}
			_ = ll.Release(ctx)

			rows, err := l.List(ctx)
			if err != nil || len(rows) != 2 || rows[0].Name != "report" {
				t.Errorf("List = %+v, %v; want report and the mapped long name", rows, err)
			}
		})
	}
}

// TestMissingTableLive: a table that does not exist is a MissingTableError
// carrying the CREATE statement.
func TestMissingTableLive(t *testing.T) {
	d := openDetected(t)
	l, err := d.TableLocker(dialects.Table{Name: uniqueName("sl_missing_")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.Acquire(testContext(t), "x", dialects.Options{})
	var missing *dialects.MissingTableError
	if !errors.As(err, &missing) || !errors.Is(err, dialects.ErrNoTable) || !strings.HasPrefix(missing.CreateSQL, "CREATE TABLE IF NOT EXISTS ") {
		t.Fatalf("Acquire on a missing table = %v; want a MissingTableError", err)
	}
	if !NewBuilder(d.Info).IsMissingTable(&mysql.MySQLError{Number: 1146}) || NewBuilder(d.Info).IsMissingTable(errors.New("1146")) {
		t.Error("IsMissingTable does not match exactly server error 1146")
	}
}

// TestShedlockTimeZoneLive: ShedLock's TIMESTAMP(3) columns hold UTC
// wall-clock values; a session in another time zone still reads a lease of
// the requested length on the database's UTC clock.
func TestShedlockTimeZoneLive(t *testing.T) {
	db := openLive(t, func(c *mysql.Config) {
		if c.Params == nil {
			c.Params = map[string]string{}
		}
		c.Params["time_zone"] = "'+05:00'"
	})
	d, err := New(testContext(t), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	l := liveLocker(t, d, dialects.PresetShedlock)
	lease, err := l.Acquire(ctx, "tz", dialects.Options{AtMost: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release(ctx)
	row, _, err := l.Inspect(ctx, "tz")
	if err != nil {
		t.Fatal(err)
	}
	if left := row.Until.Sub(row.DBNow); left <= 50*time.Second || left > time.Minute {
		t.Errorf("lease left %s on the database clock, want just under 1m", left)
	}
	if skew := time.Since(row.DBNow); skew < -time.Minute || skew > time.Minute {
		t.Errorf("database now %s is not UTC", row.DBNow)
	}
}

// The batch refresh statement on the live server, on every preset: one
// statement renews exactly the rows still held by each lease
// (locktabletest.CheckRefreshAll).
func TestRefreshBatchLive(t *testing.T) {
	d := openDetected(t)
	for _, preset := range dialects.Presets() {
		t.Run(preset, func(t *testing.T) {
			locktabletest.CheckRefreshAll(t, liveLocker(t, d, preset))
		})
	}
}
