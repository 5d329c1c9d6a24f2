package locktable_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
	"github.com/schedlock/schedlock/dialects/sqlite"
)

// createWith creates table with the given column definitions (another
// application's DDL) and returns a Locker of preset on it.
func createWith(t *testing.T, preset, ddl string) *locktable.Locker {
	t.Helper()
	db := openDB(t)
	if _, err := db.ExecContext(ctxT(t), ddl); err != nil {
		t.Fatal(err)
	}
	s, _ := dialects.Table{Preset: preset}.Schema()
	l, err := locktable.New(db, sqlite.Builder{}, dialects.Table{Preset: preset, Name: s.Table})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// TestPresetNamesFollowTheCatalogWidth: a preset table stores names as
// they are, up to the width its own DDL declares (read from the catalog,
// not assumed), and refuses a longer one with a NameTooLongError before
// anything is written: no hashing on a table other applications read.
func TestPresetNamesFollowTheCatalogWidth(t *testing.T) {
	for _, tc := range []struct {
		preset, ddl string
		width       int
	}{
		{dialects.PresetSysSchedLock, "CREATE TABLE sys_sched_lock (lock_name VARCHAR(128) NOT NULL PRIMARY KEY, lock_owner VARCHAR(255) NOT NULL, acquire_time TEXT NOT NULL, expire_time TEXT NOT NULL)", 128},
		{dialects.PresetSysSchedLock, "CREATE TABLE sys_sched_lock (lock_name VARCHAR(40) NOT NULL PRIMARY KEY, lock_owner VARCHAR(255) NOT NULL, acquire_time TEXT NOT NULL, expire_time TEXT NOT NULL)", 40},
		{dialects.PresetShedlock, "CREATE TABLE shedlock (name VARCHAR(64) NOT NULL PRIMARY KEY, lock_until TEXT NOT NULL, locked_at TEXT NOT NULL, locked_by VARCHAR(255) NOT NULL)", 64},
	} {
		t.Run(tc.preset, func(t *testing.T) {
			l := createWith(t, tc.preset, tc.ddl)
			ctx := ctxT(t)
			col, found, err := l.NameColumn(ctx)
			if err != nil || !found || col.Width != tc.width || col.Unit != dialects.NameUnitCharacters || col.Collation != "BINARY" {
				t.Fatalf("NameColumn = %+v, %v, %v; want width %d characters, BINARY", col, found, err, tc.width)
			}
			fits := strings.Repeat("名", tc.width)
			lease := mustAcquire(t, l, fits, dialects.Options{Owner: "o"})
			if row := mustInspect(t, l, fits); row.Name != fits {
				t.Fatalf("a name of %d characters is stored as %q", tc.width, row.Name)
			}
			if err := lease.Release(ctx); err != nil {
				t.Fatal(err)
			}
			over := fits + "x"
			for op, call := range map[string]func() error{
				"acquire": func() error { _, err := l.Acquire(ctx, over, dialects.Options{Owner: "o"}); return err },
				"inspect": func() error { _, _, err := l.Inspect(ctx, over); return err },
				"expire":  func() error { _, err := l.Expire(ctx, over); return err },
			} {
				err := call()
				var tooLong *dialects.NameTooLongError
				if !errors.As(err, &tooLong) || !errors.Is(err, dialects.ErrInvalid) || tooLong.Column.Width != tc.width {
					t.Fatalf("%s of a name of %d characters = %v; want a NameTooLongError with width %d", op, tc.width+1, err, tc.width)
				}
				if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "at most "+strconv.Itoa(tc.width)) {
					t.Errorf("%s: message %q is not one line naming the width", op, msg)
				}
			}
			rows, err := l.List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				if r.Name != fits {
					t.Errorf("a refused name left row %q", r.Name)
				}
			}
		})
	}
}

// TestPresetNameWithoutDeclaredWidth: a TEXT name column declares no
// width, and names of any length are stored as they are.
func TestPresetNameWithoutDeclaredWidth(t *testing.T) {
	l := createWith(t, dialects.PresetShedlock, "CREATE TABLE shedlock (name TEXT NOT NULL PRIMARY KEY, lock_until TEXT NOT NULL, locked_at TEXT NOT NULL, locked_by TEXT NOT NULL)")
	long := strings.Repeat("n", 2000)
	mustAcquire(t, l, long, dialects.Options{Owner: "o"})
	if row := mustInspect(t, l, long); row.Name != long {
		t.Fatalf("stored as %d characters", len(row.Name))
	}
}

// TestPresetNameColumnReadOnce: the catalog is read once per Locker, on
// the first statement that names a lock, and not again.
func TestPresetNameColumnReadOnce(t *testing.T) {
	l := newLocker(t, dialects.Table{Preset: dialects.PresetSysSchedLock})
	for range 3 {
		lease := mustAcquire(t, l, "job", dialects.Options{Owner: "o"})
		if err := lease.Release(ctxT(t)); err != nil {
			t.Fatal(err)
		}
	}
	if st := l.Stats(); st.Inspect != 1 || st.Acquire != 3 || st.Release != 3 {
		t.Fatalf("stats = %+v; want one catalog read (Inspect), 3 acquires, 3 one-statement releases", st)
	}
}
