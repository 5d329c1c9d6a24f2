package locktable_test

import (
	"sync"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
	"github.com/schedlock/schedlock/dialects/sqlite"
)

// shedlockTimeText is how a JVM's zone-less timestamp reaches a SQLite
// TEXT column: its wall-clock time in the JVM's zone.
func shedlockTimeText(t time.Time, loc *time.Location) string {
	return t.In(loc).Format("2006-01-02 15:04:05.000")
}

// A row ShedLock wrote from a New York JVM (zone-less local times, with
// ShedLock's own INSERT) is held until its lease ends when the table is
// read in that zone, and looks expired when it is read as UTC, which is
// what the zone option is for.
func TestWriterTimeZoneReadsShedLockRows(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	db := openDB(t)
	zoned := newLockerWith(t, db, sqlite.Builder{}, dialects.Table{Preset: dialects.PresetShedlock, TimeZone: "America/New_York"})
	ctx := ctxT(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	until := now.Add(10 * time.Minute)
	if _, err := db.ExecContext(ctx, "INSERT INTO shedlock(name, lock_until, locked_at, locked_by) VALUES(?, ?, ?, ?)",
		"report", shedlockTimeText(until, ny), shedlockTimeText(now, ny), "jvm-1"); err != nil {
		t.Fatal(err)
	}
	row := mustInspect(t, zoned, "report")
	if row.Expired() || row.Owner != "jvm-1" {
		t.Fatalf("row read in New York's zone = %+v, want held by jvm-1", row)
	}
	if d := row.Until.Sub(until); d < -time.Millisecond || d > time.Millisecond {
		t.Errorf("until read in New York's zone = %s, want %s", row.Until, until)
	}
	if d := row.LockedAt.Sub(now); d < -time.Millisecond || d > time.Millisecond {
		t.Errorf("locked_at read in New York's zone = %s, want %s", row.LockedAt, now)
	}
	_, err := zoned.Acquire(ctx, "report", dialects.Options{Owner: "schedlock", AtMost: time.Minute})
	wantErr(t, err, dialects.ErrHeld)

	asUTC := newLockerWith(t, db, sqlite.Builder{}, dialects.Table{Preset: dialects.PresetShedlock})
	if r := mustInspect(t, asUTC, "report"); !r.Expired() {
		t.Errorf("row read as UTC = %+v: New York is behind UTC, so it should look expired", r)
	}
}

// Rows schedlock writes in a writer time zone are what a ShedLock node in
// that zone reads: its takeover (lock_until <= now, in local time) does not
// match a live lease, and the stored lease end is the zone's wall-clock
// time of the lease's end.
func TestWriterTimeZoneWritesShedLockRows(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	db := openDB(t)
	zoned := newLockerWith(t, db, sqlite.Builder{}, dialects.Table{Preset: dialects.PresetShedlock, TimeZone: "Europe/Berlin"})
	ctx := ctxT(t)
	lease := mustAcquire(t, zoned, "report", dialects.Options{Owner: "schedlock", AtMost: 10 * time.Minute, AtLeast: time.Minute})
	nowLocal := shedlockTimeText(time.Now(), berlin)
	res, err := db.ExecContext(ctx, "UPDATE shedlock SET lock_until = ?, locked_at = ?, locked_by = ? WHERE name = ? AND lock_until <= ?",
		shedlockTimeText(time.Now().Add(time.Minute), berlin), nowLocal, "jvm-1", "report", nowLocal)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 0 {
		t.Fatalf("ShedLock's takeover in Berlin's zone changed %d rows of a live lease", n)
	}
	var stored string
	if err := db.QueryRowContext(ctx, "SELECT lock_until FROM shedlock WHERE name = 'report'").Scan(&stored); err != nil {
		t.Fatal(err)
	}
	wall, err := time.ParseInLocation("2006-01-02 15:04:05.000", stored, berlin)
	if err != nil {
		t.Fatal(err)
	}
	if d := wall.Sub(lease.Until()); d < -5*time.Second || d > 5*time.Second {
		t.Errorf("stored lock_until %s (Berlin) is %s from the lease's end %s", stored, d, lease.Until())
	}
	if err := lease.Refresh(ctx); err != nil {
		t.Fatalf("refresh in Berlin's zone: %v", err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatalf("release in Berlin's zone: %v", err)
	}
	// Released with one minute at least: still held, for a minute.
	if r := mustInspect(t, zoned, "report"); r.Expired() || r.Until.Sub(r.LockedAt) < 59*time.Second || r.Until.Sub(r.LockedAt) > 61*time.Second {
		t.Errorf("row after release = %+v, want held for at-least one minute after locked_at", r)
	}
	if ok, err := zoned.Expire(ctx, "report"); err != nil || !ok {
		t.Fatalf("expire: %v, %v", ok, err)
	}
	if r := mustInspect(t, zoned, "report"); !r.Expired() {
		t.Errorf("row after expire = %+v, want expired", r)
	}
	again := mustAcquire(t, zoned, "report", dialects.Options{Owner: "next", AtMost: time.Minute})
	_ = again.Release(ctx)
}

// When the writer time zone's frame changes (the host's clock moves past
// the midpoint to the zone's next change), the statements are prepared
// again with the new frame; the old ones stay open until Close, since an
// operation may still use them.
func TestWriterTimeZoneFrameChangePreparesAgain(t *testing.T) {
	db := openDB(t)
	l, err := locktable.New(db, sqlite.Builder{}, dialects.Table{Preset: dialects.PresetShedlock, TimeZone: "America/New_York"})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	at := time.Now()
	locktable.SetClock(l, func() time.Time { mu.Lock(); defer mu.Unlock(); return at })
	if err := l.CreateTable(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	before := l.Statements()["refresh"]
	lease := mustAcquire(t, l, "report", dialects.Options{Owner: "a", AtMost: 10 * time.Minute})
	want := mustInspect(t, l, "report")
	prepared := locktable.Prepares(l)

	// 200 days on, the frame holds another change of offset.
	mu.Lock()
	at = at.Add(200 * 24 * time.Hour)
	mu.Unlock()
	if after := l.Statements()["refresh"]; after == before {
		t.Fatalf("refresh SQL did not change with the frame:\n%s", after)
	}
	// Inspect's SQL has no literals of the frame, and its times are read
	// in Go, so the row reads the same.
	if got := mustInspect(t, l, "report"); !got.Until.Equal(want.Until) || !got.LockedAt.Equal(want.LockedAt) {
		t.Errorf("row after the frame changed = %+v, want %+v", got, want)
	}
	if got := locktable.Prepares(l); got != prepared+1 {
		t.Errorf("prepares = %d, want %d (inspect prepared once more)", got, prepared+1)
	}
	if n := locktable.Retired(l); n != 1 {
		t.Errorf("retired statements = %d, want 1", n)
	}
	_ = lease.Release(ctx) // the clock is 200 days off: the outcome is not the point
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if n := locktable.Retired(l); n != 0 {
		t.Errorf("retired statements after Close = %d, want 0", n)
	}
}
