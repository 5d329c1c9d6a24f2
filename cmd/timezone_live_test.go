//go:build unix

package cmd

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/dsn"
	"github.com/schedlock/schedlock/lock"
)

// zoneTestServer is a database the writer-time-zone test runs on.
type zoneTestServer struct {
	name string // postgres, mysql or sqlite
	dsn  string
}

// shedlockSQL is ShedLock's client-time SQL (no usingDbTime()) for table,
// in the placeholders of server: insert (PostgreSQL's upsert, else the
// plain INSERT), and the takeover UPDATE of an expired lock.
func shedlockSQL(server, table string) (insert, takeover string) {
	if server == "postgres" {
		return "INSERT INTO " + table + "(name, lock_until, locked_at, locked_by) VALUES($1, $2, $3, $4) ON CONFLICT (name) DO UPDATE SET lock_until = $2, locked_at = $3, locked_by = $4 WHERE " + table + ".lock_until <= $3",
			"UPDATE " + table + " SET lock_until = $1, locked_at = $2, locked_by = $3 WHERE name = $4 AND lock_until <= $5"
	}
	return "INSERT INTO " + table + "(name, lock_until, locked_at, locked_by) VALUES(?, ?, ?, ?)",
		"UPDATE " + table + " SET lock_until = ?, locked_at = ?, locked_by = ? WHERE name = ? AND lock_until <= ?"
}

// untilText reads lock_until of name as the table stores it (zone-less).
func untilText(server, table string) string {
	switch server {
	case "postgres":
		return "SELECT lock_until::text FROM " + table + " WHERE name = $1"
	case "mysql":
		return "SELECT CAST(lock_until AS CHAR) FROM " + table + " WHERE name = ?"
	}
	return "SELECT lock_until FROM " + table + " WHERE name = ?"
}

// jvmTime is instant t as a JVM in loc binds it to a zone-less column.
func jvmTime(t time.Time, loc *time.Location) string {
	return t.In(loc).Format("2006-01-02 15:04:05.000")
}

// withOptions appends x- options to a DSN of either form (in
// go-sql-driver's form a "/" in a value must be escaped as %2F).
func withOptions(raw, opts string) string {
	if strings.Contains(raw, "?") {
		return raw + "&" + opts
	}
	return raw + "?" + opts
}

// rawSQL is the database/sql handle of raw's database.
func rawSQL(t *testing.T, raw string) *sql.DB {
	t.Helper()
	d, err := dsn.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	db, err := sqlBackend(d.Connect(ctx))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db.SQL
}

type zoneListed struct {
	Name      *string `json:"name"`
	State     string  `json:"state"`
	Owner     *string `json:"owner"`
	LockUntil *string `json:"lock_until"`
}

// TestTableTimeZoneLive: on live PostgreSQL and MariaDB servers and on
// SQLite, ShedLock's table shared with a JVM in New York that writes
// zone-less local times (ShedLock's own SQL, no usingDbTime()):
//   - its row is listed held, with its lease end, by locks ls
//     --table-time-zone America/New_York (and expired without it);
//   - run and the library (x-time-zone) do not take it while it is valid;
//   - the rows schedlock writes in that zone are what a ShedLock node
//     there reads: its takeover does not match a live lease, the stored
//     lock_until is New York's wall-clock time of the lease's end, and
//     after unlock --force its takeover matches;
//   - a pause in that zone is stored in New York's wall-clock time and
//     holds the lock for the ShedLock node until resume.
func TestTableTimeZoneLive(t *testing.T) {
	servers := []zoneTestServer{{name: "sqlite", dsn: filepath.Join(t.TempDir(), "locks.db")}}
	if os.Getenv("SCHEDLOCK_TEST_POSTGRES_DSN") != "" || os.Getenv("SCHEDLOCK_TEST_MYSQL_DSN") != "" {
		for _, s := range liveServers(t) {
			servers = append(servers, zoneTestServer{name: s.name, dsn: s.dsn})
		}
	}
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			suffix := strings.ReplaceAll(dialects.NewOwner()[len(dialects.NewOwner())-8:], "-", "")
			table := "tz_live_" + suffix
			tl := openTableLocker(t, s.dsn, dialects.Table{Preset: dialects.PresetShedlock, Name: table})
			t.Cleanup(func() {
				if d, ok := tl.(dialects.TableDropper); ok {
					_ = d.DropTable(context.Background())
				}
			})
			db := rawSQL(t, s.dsn)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			insert, takeover := shedlockSQL(s.name, table)

			// A New York JVM takes "report" for ten minutes.
			now := time.Now().UTC().Truncate(time.Millisecond)
			until := now.Add(10 * time.Minute)
			if _, err := db.ExecContext(ctx, insert, "report", jvmTime(until, ny), jvmTime(now, ny), "jvm-ny"); err != nil {
				t.Fatalf("ShedLock's insert: %v", err)
			}
			tableArgs := []string{"--dsn", s.dsn, "--table", table, "--preset", dialects.PresetShedlock}
			listed := func(extra ...string) zoneListed {
				t.Helper()
				r := runWithInput(t, false, "", append(append([]string{"locks", "ls", "-o", "json", "--all", "--name", "report"}, tableArgs...), extra...)...)
				var out []zoneListed
				if r.err != nil || json.Unmarshal([]byte(r.stdout), &out) != nil || len(out) != 1 {
					t.Fatalf("locks ls %v: %v, %q", extra, r.err, r.stdout)
				}
				return out[0]
			}
			got := listed("--table-time-zone", "America/New_York")
			if got.State != "held" || got.LockUntil == nil {
				t.Fatalf("locks ls --table-time-zone America/New_York: %+v, want held", got)
			}
			if u, err := time.Parse(time.RFC3339Nano, *got.LockUntil); err != nil || u.Sub(until).Abs() > time.Second {
				t.Errorf("lock_until listed %v, want %s", *got.LockUntil, until.Format(time.RFC3339Nano))
			}
			if asUTC := listed(); asUTC.State != "expired" {
				t.Errorf("locks ls without the zone: %+v; New York is behind UTC, so it reads as expired", asUTC)
			}

			marker := filepath.Join(t.TempDir(), "ran")
			r := execRun(t, ctx, "", append(append([]string{"run"}, tableArgs...), "--table-time-zone", "America/New_York", "--name", "report", "--", "touch", marker)...)
			if r.err == nil || !strings.Contains(r.err.Error(), "is held") {
				t.Fatalf("run --table-time-zone America/New_York: exit %d, %v; want skipped, the JVM holds the lock", r.code, r.err)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("run took the lock the New York JVM holds")
			}
			lib, err := lock.Open(ctx, withOptions(s.dsn, "x-strategy=table&x-preset=shedlock&x-table="+table+"&x-time-zone="+url.QueryEscape("America/New_York")))
			if err != nil {
				t.Fatal(err)
			}
			defer lib.Close()
			if _, err := lib.Acquire(ctx, "report", lock.Options{AtMost: time.Minute}); !errors.Is(err, lock.ErrHeld) {
				t.Fatalf("library Acquire with x-time-zone: %v, want held", err)
			}

			// schedlock takes "export" in New York's zone; a ShedLock node there
			// reads it as held.
			lease, err := lib.Acquire(ctx, "export", lock.Options{AtMost: 10 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			jvmNow := jvmTime(time.Now(), ny)
			res, err := db.ExecContext(ctx, takeover, jvmTime(time.Now().Add(time.Minute), ny), jvmNow, "jvm-ny", "export", jvmNow)
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := res.RowsAffected(); n != 0 {
				t.Fatalf("ShedLock's takeover in New York's zone changed %d rows of schedlock's live lease", n)
			}
			var stored string
			if err := db.QueryRowContext(ctx, untilText(s.name, table), "export").Scan(&stored); err != nil {
				t.Fatal(err)
			}
			wall, err := time.ParseInLocation("2006-01-02 15:04:05.999999999", stored, ny)
			if err != nil {
				t.Fatal(err)
			}
			if d := wall.Sub(lease.Until()); d.Abs() > 5*time.Second {
				t.Errorf("stored lock_until %s (New York) is %s from the lease's end %s", stored, d, lease.Until())
			}
			if err := lease.Refresh(ctx); err != nil {
				t.Fatalf("refresh in New York's zone: %v", err)
			}

			// unlock --force ends the lease now, in New York's zone: the
			// ShedLock node's takeover then matches.
			u := runWithInput(t, false, "", append(append([]string{"unlock", "export", "--force", "--yes"}, tableArgs...), "--table-time-zone", "America/New_York")...)
			if u.err != nil {
				t.Fatalf("unlock --force: %v", u.err)
			}
			jvmNow = jvmTime(time.Now().Add(time.Second), ny)
			res, err = db.ExecContext(ctx, takeover, jvmTime(time.Now().Add(time.Minute), ny), jvmNow, "jvm-ny", "export", jvmNow)
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := res.RowsAffected(); n != 1 {
				t.Errorf("ShedLock's takeover after unlock --force changed %d rows, want 1", n)
			}

			// pause writes its lease end in New York's zone too: the
			// ShedLock node there sees the lock held for the pause's 2 h,
			// not for 2 h plus New York's offset; resume frees it for them.
			zoneArgs := append(append([]string{}, tableArgs...), "--table-time-zone", "America/New_York")
			p := runWithInput(t, false, "", append([]string{"pause", "backup", "--for", "2h", "--create", "--yes"}, zoneArgs...)...)
			if p.err != nil {
				t.Fatalf("pause --table-time-zone America/New_York: %v\n%s", p.err, p.stderr)
			}
			if err := db.QueryRowContext(ctx, untilText(s.name, table), "backup").Scan(&stored); err != nil {
				t.Fatal(err)
			}
			if wall, err = time.ParseInLocation("2006-01-02 15:04:05.999999999", stored, ny); err != nil {
				t.Fatal(err)
			}
			if d := time.Until(wall) - 2*time.Hour; d.Abs() > time.Minute {
				t.Errorf("the pause's stored lock_until %s (New York) ends %s from 2 h ahead", stored, d)
			}
			pausedRow := runWithInput(t, false, "", append([]string{"locks", "ls", "-o", "json", "--all", "--name", "backup"}, zoneArgs...)...)
			var rows []zoneListed
			if pausedRow.err != nil || json.Unmarshal([]byte(pausedRow.stdout), &rows) != nil || len(rows) != 1 || rows[0].State != "paused" {
				t.Errorf("locks ls of the pause: %v, %q; want one paused row", pausedRow.err, pausedRow.stdout)
			}
			jvmNow = jvmTime(time.Now(), ny)
			if res, err = db.ExecContext(ctx, takeover, jvmTime(time.Now().Add(time.Minute), ny), jvmNow, "jvm-ny", "backup", jvmNow); err != nil {
				t.Fatal(err)
			}
			if n, _ := res.RowsAffected(); n != 0 {
				t.Errorf("ShedLock's takeover in New York's zone changed %d rows of the pause", n)
			}
			if r := runWithInput(t, false, "", append([]string{"resume", "backup", "--yes"}, zoneArgs...)...); r.err != nil {
				t.Fatalf("resume --table-time-zone America/New_York: %v\n%s", r.err, r.stderr)
			}
			jvmNow = jvmTime(time.Now().Add(time.Second), ny)
			if res, err = db.ExecContext(ctx, takeover, jvmTime(time.Now().Add(time.Minute), ny), jvmNow, "jvm-ny", "backup", jvmNow); err != nil {
				t.Fatal(err)
			}
			if n, _ := res.RowsAffected(); n != 1 {
				t.Errorf("ShedLock's takeover after resume changed %d rows, want 1", n)
			}
		})
	}
}

// An unknown --table-time-zone or x-time-zone is one line and exit 2,
// before anything is read.
func TestTableTimeZoneBadName(t *testing.T) {
	db := filepath.Join(t.TempDir(), "locks.db")
	for _, args := range [][]string{
		{"locks", "ls", "--dsn", db, "--table-time-zone", "Mars/Olympus"},
		{"unlock", "x", "--yes", "--dsn", db, "--table-time-zone", "Mars/Olympus"},
		{"selfcheck", "--dsn", db, "--table-time-zone", "Mars/Olympus"},
		{"locks", "ls", "--dsn", db + "?x-time-zone=Mars/Olympus"},
	} {
		r := runWithInput(t, false, "", args...)
		if code := ExitCode(r.err); code != CodeUsage || r.err == nil || !strings.Contains(r.err.Error(), `"Mars/Olympus"`) || strings.Contains(r.err.Error(), "\n") {
			t.Errorf("%v: exit %d, %v; want one usage line naming the zone", args, code, r.err)
		}
	}
	r := execRun(t, context.Background(), "", "run", "--dsn", db, "--name", "x", "--table-time-zone", "Europe/Nowhere", "--", "true")
	if r.code != CodeUsage || !strings.Contains(r.err.Error(), "unknown time zone") {
		t.Errorf("run with an unknown zone: exit %d, %v", r.code, r.err)
	}
}
