//go:build unix

package cmd

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	mysqldialect "github.com/schedlock/schedlock/dialects/mysql"
	"github.com/schedlock/schedlock/dialects/postgres"
)

// rawClient is another program's named lock on one server: MySQL's
// GET_LOCK('NAME') or PostgreSQL's pg_try_advisory_lock(hashtext('NAME')),
// with the flags that make schedlock take the same lock.
type rawClient struct {
	driver, try, held, release string
	flags                      []string
}

func rawClientOf(server string) rawClient {
	if server == "postgres" {
		return rawClient{
			driver:  postgres.DriverName,
			try:     "SELECT pg_try_advisory_lock(hashtext($1))::int",
			held:    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1 AND ((classid::bigint << 32) | objid::bigint) = (hashtext($1)::bigint & x'FFFFFFFFFFFFFFFF'::bigint) AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
			release: "SELECT pg_advisory_unlock(hashtext($1))",
			flags:   []string{"--session-names", "raw", "--session-key", "hashtext"},
		}
	}
	return rawClient{
		driver: "mysql",
		try:    "SELECT GET_LOCK(?, 0)",
		// IS_USED_LOCK names the holder's connection, NULL when free.
		held:    "SELECT IS_USED_LOCK(?) IS NOT NULL",
		release: "SELECT RELEASE_LOCK(?)",
		flags:   []string{"--session-names", "raw"},
	}
}

// A lock another program takes on the server for NAME (a mariadb
// client's GET_LOCK('NAME', 10), psql's
// pg_try_advisory_lock(hashtext('NAME'))) makes `run --session-names raw
// --name NAME` skip; `locks ls --name NAME` and `unlock NAME
// --kill-session` find that holder; and while run holds the lock, the
// other program's try answers 0 and the server names run's session as
// the holder.
func TestRawSessionNamesMeetOtherPrograms(t *testing.T) {
	for _, s := range liveServers(t) {
		t.Run(s.name, func(t *testing.T) {
			ctx := context.Background()
			c := rawClientOf(s.name)
			name := "sched:order_close-" + strconv.FormatInt(time.Now().UnixNano(), 36)
			db, err := sql.Open(c.driver, s.dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			holder, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Close()
			var got int
			if err := holder.QueryRowContext(ctx, c.try, name).Scan(&got); err != nil || got != 1 {
				t.Fatalf("the other program's lock: %d, %v", got, err)
			}
			holderID := liveSessionID(t, holder, s.name)

			ran := filepath.Join(t.TempDir(), "ran")
			r := runCmd(t, false, nil, append(append([]string{"run", "--dsn", s.dsn}, c.flags...), "--name", name, "--", "touch", ran)...)
			if r.err == nil || ExitCode(r.err) != 0 || !strings.Contains(r.err.Error(), "skipped touch: lock "+strconv.Quote(name)+" is held by session "+holderID) {
				t.Fatalf("run while another program holds %q: %v; want skipped naming session %s, exit 0", name, r.err, holderID)
			}
			if _, err := os.Stat(ran); err == nil {
				t.Fatal("run ran its command while another program held the lock")
			}

			// locks ls --name finds the other program's lock: with the
			// raw flags on both servers, and on MySQL without them too.
			lsArgs := [][]string{c.flags}
			if s.name == "mysql" {
				lsArgs = append(lsArgs, nil)
			}
			for _, flags := range lsArgs {
				r = runCmd(t, false, nil, append(append([]string{"locks", "ls", "--dsn", s.dsn, "--strategy", "session", "-o", "json"}, flags...), "--name", name)...)
				if r.err != nil {
					t.Fatalf("locks ls %v: %v; %s", flags, r.err, r.stderr)
				}
				var listed []lockView
				if err := json.Unmarshal([]byte(r.stdout), &listed); err != nil {
					t.Fatalf("locks ls -o json: %v: %s", err, r.stdout)
				}
				if len(listed) != 1 || listed[0].Holder.SessionID == nil || *listed[0].Holder.SessionID != holderID || listed[0].State != "held" {
					t.Fatalf("locks ls %v --name %s = %s; want the lock held by session %s", flags, name, r.stdout, holderID)
				}
			}

			r = runCmd(t, false, nil, append([]string{"unlock", name, "--dsn", s.dsn, "--kill-session", "--yes"}, c.flags...)...)
			if r.err != nil || !strings.Contains(r.stdout, "Terminated session "+holderID) {
				t.Fatalf("unlock %s --kill-session: %v; stdout %q stderr %q", name, r.err, r.stdout, r.stderr)
			}
			if err := holder.PingContext(ctx); err == nil {
				t.Fatal("the other program's session still answers after unlock --kill-session")
			}

			// The other way round: run holds the lock.
			dir := t.TempDir()
			started, finish := filepath.Join(dir, "started"), filepath.Join(dir, "finish")
			args := append(append([]string{"run", "--dsn", s.dsn}, c.flags...), "--name", name, "--",
				"sh", "-c", `touch "$0"; while [ ! -e "$1" ]; do sleep 0.05; done`, started, finish)
			done := make(chan result, 1)
			go func() { done <- runCmd(t, false, nil, args...) }()
			defer func() {
				_ = os.WriteFile(finish, nil, 0o644)
				if r := <-done; r.err != nil {
					t.Errorf("run: %v\n%s", r.err, r.stderr)
				}
			}()
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				if _, err := os.Stat(started); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the command did not start within 30s")
				}
			}
			other, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			if err := other.QueryRowContext(ctx, c.try, name).Scan(&got); err != nil || got != 0 {
				t.Fatalf("the other program's try while run holds %q: %d, %v; want 0", name, got, err)
			}
			var held bool
			if err := other.QueryRowContext(ctx, c.held, name).Scan(&held); err != nil || !held {
				t.Fatalf("the server names no holder while run holds %q: %v, %v", name, held, err)
			}
		})
	}
}

// liveSessionID is the id locks ls shows for c's session.
func liveSessionID(t *testing.T, c *sql.Conn, server string) string {
	t.Helper()
	q := "SELECT CONNECTION_ID()"
	if server == "postgres" {
		q = "SELECT pg_backend_pid()"
	}
	var id int64
	if err := c.QueryRowContext(context.Background(), q).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return strconv.FormatInt(id, 10)
}

// Session names the command line or the database cannot take are one
// line, exit 2, before anything is written: an unknown value, a key
// derivation without raw names, a derivation MySQL has not, a raw name
// over GET_LOCK's 64 characters, raw names with a namespace.
func TestSessionNamesBadInputLive(t *testing.T) {
	for _, s := range liveServers(t) {
		t.Run(s.name, func(t *testing.T) {
			ran := filepath.Join(t.TempDir(), "ran")
			cases := [][]string{
				{"--session-names", "exact", "--name", "x"},
				{"--session-key", "hashtext", "--name", "x"},
				{"--session-names", "raw", "--session-key", "md5", "--name", "x"},
				{"--session-names", "raw", "--namespace", "staging", "--name", "x"},
				{"--key", "1", "--name", "x"},
			}
			if s.name == "mysql" {
				cases = append(cases,
					[]string{"--session-names", "raw", "--session-key", "hashtext", "--name", "x"},
					[]string{"--session-names", "raw", "--name", strings.Repeat("n", 65)})
			} else {
				cases = append(cases,
					[]string{"--session-names", "raw", "--name", "x"},
					[]string{"--key", "nightly"})
			}
			for _, flags := range cases {
				r := runCmd(t, false, nil, append(append([]string{"run", "--dsn", s.dsn}, flags...), "--", "touch", ran)...)
				if code := ExitCode(r.err); code != CodeUsage || strings.Contains(r.err.Error(), "\n") {
					t.Errorf("run %v: exit %d (%v), want one line, exit %d", flags, code, r.err, CodeUsage)
				}
			}
			if _, err := os.Stat(ran); err == nil {
				t.Error("a refused run ran its command")
			}
		})
	}
}

// On MySQL/MariaDB a NAME held both as schedlock's scoped DB/NAME and as
// GET_LOCK('NAME') of another client is two locks: unlock refuses to
// choose (exit 2, one line naming both keys) and locks ls --key shows
// each by itself.
func TestUnlockNameHeldTwiceOnMySQL(t *testing.T) {
	for _, s := range liveServers(t) {
		if s.name != "mysql" {
			continue
		}
		ctx := context.Background()
		cfg, err := gomysql.ParseDSN(s.dsn)
		if err != nil {
			t.Fatal(err)
		}
		name := "order_close-" + strconv.FormatInt(time.Now().UnixNano(), 36)
		scoped := mysqldialect.LockName(cfg.DBName, name)
		db, err := sql.Open("mysql", s.dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		ids := map[string]string{}
		for _, key := range []string{name, scoped} {
			c, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var got int
			if err := c.QueryRowContext(ctx, "SELECT GET_LOCK(?, 0)", key).Scan(&got); err != nil || got != 1 {
				t.Fatalf("GET_LOCK(%q): %d, %v", key, got, err)
			}
			ids[key] = liveSessionID(t, c, s.name)
		}
		r := runCmd(t, false, nil, "unlock", name, "--dsn", s.dsn, "--kill-session", "--yes")
		msg := ""
		if r.err != nil {
			msg = r.err.Error()
		}
		if ExitCode(r.err) != CodeUsage || strings.Contains(msg, "\n") || !strings.Contains(msg, strconv.Quote(name)) || !strings.Contains(msg, strconv.Quote(scoped)) {
			t.Fatalf("unlock of a name held twice: %v; want one line, exit 2, naming keys %q and %q", r.err, name, scoped)
		}
		for key, id := range ids {
			r := runCmd(t, false, nil, "locks", "ls", "--dsn", s.dsn, "--key", key, "-o", "json")
			var listed []lockView
			if r.err != nil || json.Unmarshal([]byte(r.stdout), &listed) != nil || len(listed) != 1 || listed[0].Holder.SessionID == nil || *listed[0].Holder.SessionID != id {
				t.Errorf("locks ls --key %q: %v; %s; want session %s", key, r.err, r.stdout, id)
			}
		}
	}
}
