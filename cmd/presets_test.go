package cmd

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects/sqlite"
)

// sysSchedLockFile is a SQLite file holding a sys_sched_lock table made
// with the published design's DDL (lock_name VARCHAR(128)) and a ShedLock
// table (name VARCHAR(64)), and a connection to it.
func sysSchedLockFile(t *testing.T) (string, *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "locks.db")
	db, err := sql.Open(sqlite.DriverName, sqlite.DSN(path))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	for _, s := range []string{
		`CREATE TABLE sys_sched_lock (lock_name VARCHAR(128) NOT NULL PRIMARY KEY, lock_owner VARCHAR(255) NOT NULL, acquire_time TEXT NOT NULL, expire_time TEXT NOT NULL)`,
		`CREATE TABLE shedlock (name VARCHAR(64) NOT NULL PRIMARY KEY, lock_until TEXT NOT NULL, locked_at TEXT NOT NULL, locked_by VARCHAR(255) NOT NULL)`,
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return path, db
}

func countRows(t *testing.T, db *sql.DB, table string) int {
	t.Helper()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRunNameTooLongForPreset: a name longer than a preset table's column
// is refused in one line with the column's width, exit 2, before anything
// is written and before the command runs; never stored hashed.
func TestRunNameTooLongForPreset(t *testing.T) {
	path, db := sysSchedLockFile(t)
	for _, tc := range []struct {
		preset, table string
		width         int
	}{
		{"sys_sched_lock", "sys_sched_lock", 128},
		{"shedlock", "shedlock", 64},
	} {
		t.Run(tc.preset, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "ran")
			name := strings.Repeat("n", tc.width+1)
			r := execRun(t, context.Background(), "", "run", "--dsn", path, "--preset", tc.preset, "--name", name, "--", "touch", marker)
			if r.code != CodeUsage {
				t.Fatalf("exit %d (%v); want %d", r.code, r.err, CodeUsage)
			}
			msg := r.err.Error()
			if strings.Contains(strings.TrimRight(msg, "\n"), "\n") || !strings.Contains(msg, "stores at most "+strconv.Itoa(tc.width)) {
				t.Errorf("message %q: want one line naming the width %d", msg, tc.width)
			}
			if n := countRows(t, db, tc.table); n != 0 {
				t.Errorf("%d rows written by the refused run", n)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("the command ran")
			}
			// A name of exactly the width is stored as it is.
			fits := name[:tc.width]
			if r := execRun(t, context.Background(), "", "run", "--dsn", path, "--preset", tc.preset, "--name", fits, "--", "true"); r.err != nil {
				t.Fatalf("run with a name of %d characters: %v", tc.width, r.err)
			}
		})
	}
}

// TestRunSysSchedLockAtLeastDeletesRow: on sys_sched_lock, run keeps the
// row until --at-least has passed and deletes it before it exits, so an
// application that locks by INSERT is not refused by it afterwards.
func TestRunSysSchedLockAtLeastDeletesRow(t *testing.T) {
	path, db := sysSchedLockFile(t)
	r := execRun(t, context.Background(), "", "run", "--dsn", path, "--preset", "sys_sched_lock", "--name", "short", "--at-least", "1s", "--", "true")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if n := countRows(t, db, "sys_sched_lock"); n != 0 {
		t.Fatalf("%d rows after run exited; want its row deleted", n)
	}
	// Without at-least the release deletes the row at once.
	r = execRun(t, context.Background(), "", "run", "--dsn", path, "--preset", "sys_sched_lock", "--name", "quick", "--", "true")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if n := countRows(t, db, "sys_sched_lock"); n != 0 {
		t.Fatalf("%d rows after run exited; want its row deleted", n)
	}
}

// TestUnlockForceDeletesSysSchedLockRow: an expired sys_sched_lock row (a
// crashed holder of an application that locks by INSERT) is not held, so
// plain unlock changes nothing and says --force deletes it; unlock
// --force deletes it, as it deletes a live row.
func TestUnlockForceDeletesSysSchedLockRow(t *testing.T) {
	path, db := sysSchedLockFile(t)
	for _, s := range []string{
		`INSERT INTO sys_sched_lock VALUES ('crashed', 'app-7', strftime('%Y-%m-%d %H:%M:%f', 'now', '-40 minutes'), strftime('%Y-%m-%d %H:%M:%f', 'now', '-10 minutes'))`,
		`INSERT INTO sys_sched_lock VALUES ('live', 'app-8', strftime('%Y-%m-%d %H:%M:%f', 'now', '-1 minutes'), strftime('%Y-%m-%d %H:%M:%f', 'now', '+10 minutes'))`,
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	r := runUnlockHooked(t, path, nil, "crashed", "--yes", "--preset", "sys_sched_lock")
	if ExitCode(r.err) != CodeNegative || !strings.Contains(r.err.Error(), "add --force to delete it") {
		t.Fatalf("unlock of an expired row: %v; want exit 3 naming --force", r.err)
	}
	if n := countRows(t, db, "sys_sched_lock"); n != 2 {
		t.Fatalf("%d rows after a refused unlock; want 2", n)
	}
	r = runUnlockHooked(t, path, nil, "crashed", "--dry-run", "--force", "--preset", "sys_sched_lock")
	if r.err != nil || !strings.Contains(r.stdout, "after:  no row — it is deleted") {
		t.Fatalf("dry run: %v\n%s", r.err, r.stdout)
	}
	for _, name := range []string{"crashed", "live"} {
		r = runUnlockHooked(t, path, nil, name, "--yes", "--force", "--preset", "sys_sched_lock")
		if r.err != nil {
			t.Fatalf("unlock --force %s: %v\n%s", name, r.err, r.stderr)
		}
		if !strings.Contains(r.stdout, "after:  no row (deleted)") {
			t.Errorf("unlock --force %s said:\n%s", name, r.stdout)
		}
	}
	if n := countRows(t, db, "sys_sched_lock"); n != 0 {
		t.Fatalf("%d rows after the forced unlocks; want none", n)
	}
}

// TestUnlockNameTooLongForPreset: unlock of a name the named preset table
// cannot hold is refused with its width (exit 2); among the tables found
// on their own, that table is passed over (the lock is not held, exit 3).
func TestUnlockNameTooLongForPreset(t *testing.T) {
	path, _ := sysSchedLockFile(t)
	name := strings.Repeat("n", 129)
	r := runUnlockHooked(t, path, nil, name, "--yes", "--preset", "sys_sched_lock")
	if ExitCode(r.err) != CodeUsage || !strings.Contains(r.err.Error(), "stores at most 128") {
		t.Fatalf("unlock --preset sys_sched_lock of 129 characters: %v; want exit 2 naming the width", r.err)
	}
	r = runUnlockHooked(t, path, nil, name, "--yes")
	if ExitCode(r.err) != CodeNegative || !strings.Contains(r.err.Error(), "is not held") {
		t.Fatalf("unlock of 129 characters among the found tables: %v; want exit 3, not held", r.err)
	}
}
