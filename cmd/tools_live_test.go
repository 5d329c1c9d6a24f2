//go:build unix

package cmd

import (
	"context"
	"database/sql"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// toolLock is a migration tool's session lock as a test takes it from a
// connection of its own.
type toolLock struct {
	tool, key string
	take      string // SQL that takes it, with the key as its argument
	free      string // SQL that tries to take it from another session; true when free
	release   string
	arg       any
}

// toolLockOf derives, as the tool does for the test database, the lock
// golang-migrate takes on PostgreSQL and Flyway on MySQL.
func toolLockOf(t *testing.T, ctx context.Context, s liveServer, conn *sql.Conn) toolLock {
	t.Helper()
	if s.name == "postgres" {
		var database, schema string
		if err := conn.QueryRowContext(ctx, "SELECT current_database(), current_schema()").Scan(&database, &schema); err != nil {
			t.Fatal(err)
		}
		key := dialects.GolangMigrateLockID(database, schema, "schema_migrations")
		return toolLock{tool: dialects.ToolGolangMigrate, key: strconv.FormatUint(uint64(key), 10), arg: int64(key),
			take: "SELECT pg_advisory_lock($1)", free: "SELECT pg_try_advisory_lock($1)", release: "SELECT pg_advisory_unlock($1)"}
	}
	var database string
	if err := conn.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&database); err != nil {
		t.Fatal(err)
	}
	name := "Flyway-" + strconv.Itoa(int(dialects.JavaStringHash("`"+database+"`.`flyway_schema_history`")))
	return toolLock{tool: dialects.ToolFlyway, key: name, arg: name,
		take: "SELECT GET_LOCK(?, 10)", free: "SELECT GET_LOCK(?, 0) = 1", release: "SELECT RELEASE_LOCK(?)"}
}

// A migration tool's session lock, held from a raw connection, is listed
// with the tool's name and freed by unlock --key --kill-session; a NAME
// that is the key is not taken for the key.
func TestToolLockListedAndFreedByKey(t *testing.T) {
	for _, s := range liveServers(t) {
		t.Run(s.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			driver := map[string]string{"postgres": "pgx", "mysql": "mysql"}[s.name]
			db, err := sql.Open(driver, s.dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			holder, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Close()
			lock := toolLockOf(t, ctx, s, holder)
			if _, err := holder.ExecContext(ctx, lock.take, lock.arg); err != nil {
				t.Fatal(err)
			}

			r := runCmd(t, false, nil, "locks", "ls", "--dsn", s.dsn, "-o", "json")
			if r.err != nil {
				t.Fatalf("locks ls: %v; %s", r.err, r.stderr)
			}
			var listed []map[string]any
			if err := json.Unmarshal([]byte(r.stdout), &listed); err != nil {
				t.Fatalf("locks ls -o json: %v: %s", err, r.stdout)
			}
			var entry map[string]any
			for _, e := range listed {
				if e["key"] == lock.key {
					entry = e
				}
			}
			if entry == nil || entry["tool"] != lock.tool || entry["state"] != "held" {
				t.Fatalf("lock %s of %s listed as %v; listing %s", lock.key, lock.tool, entry, r.stdout)
			}

			if s.name == "postgres" {
				r = runCmd(t, false, nil, "unlock", lock.key, "--dsn", s.dsn, "--kill-session", "--yes")
				if ExitCode(r.err) != CodeNegative {
					t.Fatalf("unlock %s as a NAME: %v, want exit 3 (a name is not a key)", lock.key, r.err)
				}
				if !strings.Contains(r.err.Error(), "--key "+lock.key) {
					t.Errorf("unlock of a numeric NAME does not suggest --key: %v", r.err)
				}
			} else {
				// A GET_LOCK name is also the NAME of the lock another
				// client takes with it: unlock NAME finds it (IS_USED_LOCK).
				r = runCmd(t, false, nil, "unlock", lock.key, "--dsn", s.dsn, "--kill-session", "--dry-run")
				if r.err != nil || !strings.Contains(r.stderr+r.stdout, "key "+lock.key) {
					t.Fatalf("unlock %s --kill-session --dry-run: %v; %s%s", lock.key, r.err, r.stdout, r.stderr)
				}
			}

			r = runCmd(t, false, nil, "unlock", "--key", lock.key, "--dsn", s.dsn, "--kill-session")
			if ExitCode(r.err) != CodeUsage || !strings.Contains(r.err.Error(), "refusing to unlock key "+lock.key+" without confirmation") {
				t.Errorf("unlock --key of a held lock without a terminal or --yes: %v, want exit 2 asking for --yes", r.err)
			}
			r = runCmd(t, false, nil, "unlock", "--key", lock.key, "--dsn", s.dsn, "--kill-session", "--yes")
			if r.err != nil {
				t.Fatalf("unlock --key %s --kill-session: %v; %s", lock.key, r.err, r.stderr)
			}
			if !strings.Contains(r.stdout, "Terminated session") || !strings.Contains(r.stdout, "("+lock.tool+") is free") {
				t.Errorf("unlock --key output %q", r.stdout)
			}
			if err := holder.PingContext(ctx); err == nil {
				t.Error("the holding session still answers after unlock --key --kill-session")
			}
			other, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			var free bool
			if err := other.QueryRowContext(ctx, lock.free, lock.arg).Scan(&free); err != nil || !free {
				t.Fatalf("lock %s after unlock --key: free %v, err %v", lock.key, free, err)
			}
			if _, err := other.ExecContext(ctx, lock.release, lock.arg); err != nil {
				t.Fatal(err)
			}

			r = runCmd(t, false, nil, "unlock", "--key", lock.key, "--dsn", s.dsn, "--kill-session", "--yes")
			if ExitCode(r.err) != CodeNegative {
				t.Errorf("unlock --key of a free lock: %v, want exit 3", r.err)
			}
			// Without --yes too: nothing to confirm, so the answer is exit 3.
			r = runCmd(t, false, nil, "unlock", "--key", lock.key, "--dsn", s.dsn, "--kill-session")
			if ExitCode(r.err) != CodeNegative {
				t.Errorf("unlock --key of a free lock without --yes: %v, want exit 3", r.err)
			}
		})
	}
}
