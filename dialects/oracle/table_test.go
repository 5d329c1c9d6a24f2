package oracle

import (
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/oralike/oraliketest"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// TestTableLockerSimulated walks one lock through its life on the native
// table and checks what Oracle's errors turn into.
func TestTableLockerSimulated(t *testing.T) {
	sim, db := openSim(t, config19c())
	ctx := testCtx(t)
	tl, err := db.TableLocker(dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}

	_, _, err = tl.Inspect(ctx, "job")
	var missing *dialects.MissingTableError
	if !errors.As(err, &missing) || !strings.Contains(missing.CreateSQL, "EXECUTE IMMEDIATE 'CREATE TABLE schedlock (") {
		t.Fatalf("Inspect before the table exists: %v; want a *dialects.MissingTableError with the CREATE (ORA-00942)", err)
	}
	if err := tl.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tl.CreateTable(ctx); err != nil {
		t.Fatalf("CreateTable on an existing table (ORA-00955, ignored by the block) must succeed: %v", err)
	}

	first, err := tl.Acquire(ctx, "job", dialects.Options{Owner: "a", AtMost: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if tok, ok := first.Token(); !ok || tok != 1 {
		t.Errorf("first token = %d, %v; want 1 (read back with Inspect after the MERGE)", tok, ok)
	}
	_, err = tl.Acquire(ctx, "job", dialects.Options{Owner: "b"})
	var held *dialects.HeldError
	if !errors.As(err, &held) || held.Holder != "a" || held.Until.IsZero() {
		t.Fatalf("acquire of a live lock: %v; want a *dialects.HeldError naming a", err)
	}
	row, found, err := tl.Inspect(ctx, "job")
	if err != nil || !found || row.Owner != "a" || row.Until.Sub(row.LockedAt) != time.Minute || row.Expired() {
		t.Fatalf("Inspect = %+v, %v, %v; want a live one-minute lease of a", row, found, err)
	}
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	second, err := tl.Acquire(ctx, "job", dialects.Options{Owner: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if tok, _ := second.Token(); tok != 2 {
		t.Errorf("second token = %d; want 2", tok)
	}
	expired, err := tl.Expire(ctx, "job")
	if err != nil || !expired {
		t.Fatalf("Expire of a live lease = %v, %v; want true", expired, err)
	}
	if err := second.Refresh(ctx); !errors.Is(err, dialects.ErrLeaseLost) {
		t.Errorf("refresh after a forced expiry: %v; want ErrLeaseLost", err)
	}
	if expired, err := tl.Expire(ctx, "job"); err != nil || expired {
		t.Errorf("Expire of an ended lease = %v, %v; want false", expired, err)
	}
	if err := tl.(dialects.TableDropper).DropTable(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tl.(dialects.TableDropper).DropTable(ctx); err != nil {
		t.Fatalf("dropping a missing table must succeed: %v", err)
	}
	sim.AssertUnderstood(t)
}

// TestLongNamesFitTheColumns: names longer than the native table's column
// are stored mapped, never refused by the server (ORA-12899); the preset
// tables, which other applications read, refuse them with their width
// before anything is sent but the catalog read.
func TestLongNamesFitTheColumns(t *testing.T) {
	sim, db := openSim(t, config19c())
	ctx := testCtx(t)
	for _, preset := range dialects.Presets() {
		tl, err := db.TableLocker(dialects.Table{Preset: preset})
		if err != nil {
			t.Fatal(err)
		}
		if err := tl.CreateTable(ctx); err != nil {
			t.Fatal(err)
		}
		long := strings.Repeat("名前", 200)
		before := sim.Acquires
		lease, err := tl.Acquire(ctx, long, dialects.Options{})
		if preset != dialects.PresetSchedlock {
			var tooLong *dialects.NameTooLongError
			if !errors.As(err, &tooLong) || !errors.Is(err, dialects.ErrInvalid) || tooLong.Column.Width != (&Builder{}).MaxNameRunes(tl.Schema()) {
				t.Fatalf("%s: acquire of a 400-character name = %v; want a NameTooLongError with the column's width", preset, err)
			}
			if sim.Acquires != before {
				t.Errorf("%s: the refused acquire sent its MERGE", preset)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: acquire of a 400-character name: %v", preset, err)
		}
		if err := lease.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestServerClockDecides: with the database clock ten minutes ahead of the
// host, leases are computed and compared on the database clock.
func TestServerClockDecides(t *testing.T) {
	cfg := config19c()
	cfg.ClockOffset = 10 * time.Minute
	_, db := openSim(t, cfg)
	ctx := testCtx(t)
	tl, err := db.TableLocker(dialects.Table{Preset: dialects.PresetShedlock})
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	if _, err := tl.Acquire(ctx, "job", dialects.Options{AtMost: time.Minute}); err != nil {
		t.Fatal(err)
	}
	row, _, err := tl.Inspect(ctx, "job")
	if err != nil {
		t.Fatal(err)
	}
	if skew := row.LockedAt.Sub(before); skew < 9*time.Minute {
		t.Errorf("locked_at is %s ahead of the host; want the database clock (10 minutes ahead)", skew)
	}
	if row.Until.Sub(row.LockedAt) != time.Minute || row.Expired() {
		t.Errorf("row %+v: want a live one-minute lease on the database clock", row)
	}
}

// TestOldIdentifierLimit: before 12.2 a table name longer than 30 bytes is
// refused up front, naming the limit; from 12.2 it is accepted.
func TestOldIdentifierLimit(t *testing.T) {
	long := dialects.Table{Name: "schedlock_selfcheck_0123abcd_schedlock"}
	_, err := NewTableLocker(nil, dialects.Info{Version: "12.1.0.2.0"}, long)
	if !errors.Is(err, dialects.ErrInvalid) || !strings.Contains(err.Error(), "30 bytes") {
		t.Errorf("12.1 with a 38-byte table name: %v; want ErrInvalid naming the 30-byte limit", err)
	}
	sim := newSim(t, config19c())
	db, _ := sim.Open(t)
	if _, err := NewTableLocker(db, dialects.Info{Version: "12.2.0.1.0"}, long); err != nil {
		t.Errorf("12.2 with a 38-byte table name: %v", err)
	}
	if _, err := NewTableLocker(db, dialects.Info{Version: "11.2.0.4.0"}, dialects.Table{Name: "app.shedlock"}); err != nil {
		t.Errorf("11.2 with a short qualified name: %v", err)
	}
}

// TestRoundTrips counts the statements of one acquire–release cycle.
func TestRoundTrips(t *testing.T) {
	sim := newSim(t, simConfig{Config: oraliketest.Config{Tables: presetTables()}})
	sqlDB, log := sim.Open(t)
	ctx := testCtx(t)
	info := ParseVersion(Versions{VersionFull: "19.22.0.0.0"})
	session, _ := newSessionLocker(sqlDB, lockAccess{})
	session.(*sqlkit.SessionLocker).CheckEvery = time.Hour // no connection checks inside the count
	tests := []struct {
		what   string
		locker func() dialects.Locker
		want   int
	}{
		{"session (REQUEST block, RELEASE block)", func() dialects.Locker { return session }, 2},
		{"native table (MERGE, token read, UPDATE)", func() dialects.Locker { return tableLocker(t, sqlDB, info, dialects.PresetSchedlock) }, 3},
		{"shedlock table (MERGE, UPDATE)", func() dialects.Locker { return tableLocker(t, sqlDB, info, dialects.PresetShedlock) }, 2},
	}
	for _, tt := range tests {
		l := tt.locker()
		// The first cycle creates nothing; measure a second one.
		lease, err := l.Acquire(ctx, "cycle-"+tt.what, dialects.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := lease.Release(ctx); err != nil {
			t.Fatal(err)
		}
		before := len(log.Statements())
		lease, err = l.Acquire(ctx, "cycle-"+tt.what, dialects.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := lease.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if got := len(log.Statements()) - before; got != tt.want {
			t.Errorf("%s: %d statements per cycle, want %d", tt.what, got, tt.want)
		}
	}
}

func tableLocker(t *testing.T, db *sql.DB, info dialects.Info, preset string) dialects.TableLocker {
	t.Helper()
	tl, err := NewTableLocker(db, info, dialects.Table{Preset: preset})
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.CreateTable(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	return tl
}
