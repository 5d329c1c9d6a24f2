//go:build unix

package cmd

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/claim"
	"github.com/schedlock/schedlock/dialects"
)

// userTaskTable is the DDL of a task table an application made itself,
// in server's SQL: its own column names, status values WAIT, RUNNING,
// DONE and FAILED, none of the optional columns (type, payload, priority,
// max_retries, updated_at), and a column of its own (note).
func userTaskTable(server, table string) string {
	switch server {
	case "postgres":
		return "CREATE TABLE " + table + " (order_id bigserial PRIMARY KEY, state varchar(16) NOT NULL, run_at timestamp(3) NOT NULL, " +
			"attempts integer NOT NULL DEFAULT 0, worker varchar(255), lease_end timestamp(3), row_version bigint NOT NULL DEFAULT 0, note text)"
	case "mysql":
		return "CREATE TABLE " + table + " (order_id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, state VARCHAR(16) NOT NULL, run_at DATETIME(3) NOT NULL, " +
			"attempts INT NOT NULL DEFAULT 0, worker VARCHAR(255) NULL, lease_end DATETIME(3) NULL, row_version BIGINT NOT NULL DEFAULT 0, note TEXT NULL) ENGINE=InnoDB"
	}
	return "CREATE TABLE " + table + " (order_id INTEGER PRIMARY KEY, state TEXT NOT NULL, run_at TEXT NOT NULL, " +
		"attempts INTEGER NOT NULL DEFAULT 0, worker TEXT, lease_end TEXT, row_version INTEGER NOT NULL DEFAULT 0, note TEXT)"
}

// userColumns maps the required roles to userTaskTable's columns, as
// --column flags and as claim.Columns.
var (
	userColumnFlags = []string{"--column", "id=order_id", "--column", "status=state", "--column", "due_at=run_at",
		"--column", "retries=attempts", "--column", "owner=worker", "--column", "claimed_until=lease_end", "--column", "version=row_version"}
	userColumns = claim.Columns{ID: "order_id", Status: "state", DueAt: "run_at", Retries: "attempts",
		Owner: "worker", ClaimedUntil: "lease_end", Version: "row_version"}
	userStatuses = claim.Statuses{Ready: "WAIT", Claimed: "RUNNING", Done: "DONE", Failed: "FAILED"}
)

// snapshotRows is every row of table as text, in id order.
func snapshotRows(t *testing.T, db *sql.DB, table string) string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), "SELECT order_id, state, run_at, attempts, worker, lease_end, row_version FROM "+table+" ORDER BY order_id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		v := make([]sql.NullString, 7)
		dest := make([]any, len(v))
		for i := range v {
			dest[i] = &v[i]
		}
		if err := rows.Scan(dest...); err != nil {
			t.Fatal(err)
		}
		for _, s := range v {
			b.WriteString(s.String + "|")
		}
		b.WriteString("\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestClaimsUserTableLive: on live PostgreSQL and MariaDB servers (when
// their DSNs are set) and on SQLite, a task table of the application's
// own — its own column names, WAIT/RUNNING/DONE/FAILED, no optional
// columns — is claimed, completed, failed, given back and extended
// through the library with the mapping; `claims ls --all` lists every row
// in its state; a RUNNING row of dead-worker whose lease has passed is
// found by `claims release --dry-run`, which changes nothing, and given
// back (WAIT, unowned) without it. Bad mappings are refused with a usage
// error before anything is written, while a release would have changed a
// row.
func TestClaimsUserTableLive(t *testing.T) {
	type server struct{ name, dsn string }
	servers := []server{{"sqlite", "sqlite:" + filepath.Join(t.TempDir(), "orders.db") + "?x-create-file=true"}}
	if os.Getenv("SCHEDLOCK_TEST_POSTGRES_DSN") != "" || os.Getenv("SCHEDLOCK_TEST_MYSQL_DSN") != "" {
		for _, s := range liveServers(t) {
			servers = append(servers, server{s.name, s.dsn})
		}
	}
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			table := "t_order_" + strings.ReplaceAll(dialects.NewOwner()[len(dialects.NewOwner())-8:], "-", "")
			db := rawSQL(t, s.dsn)
			if _, err := db.ExecContext(ctx, userTaskTable(s.name, table)); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP TABLE "+table) })
			cliDSN := strings.TrimSuffix(s.dsn, "?x-create-file=true") // the file exists now

			q, err := claim.Open(ctx, s.dsn, claim.Options{Table: table, Columns: userColumns, Statuses: userStatuses,
				MaxRetries: 1, Backoff: func(int) time.Duration { return 0 }})
			if err != nil {
				t.Fatal(err)
			}
			defer q.Close()
			if err := q.Add(ctx, make([]claim.NewTask, 5)...); err != nil {
				t.Fatalf("add: %v", err)
			}
			one := func(owner string, lease time.Duration) claim.Task {
				t.Helper()
				got, err := q.Claim(ctx, claim.Request{Owner: owner, Max: 1, Lease: lease})
				if err != nil || len(got) != 1 {
					t.Fatalf("claim for %s: %d rows, %v", owner, len(got), err)
				}
				return got[0]
			}
			done := one("worker-done", time.Hour)
			if err := q.Complete(ctx, &done); err != nil {
				t.Fatalf("complete: %v", err)
			}
			live := one("worker-live", time.Minute)
			if err := q.Extend(ctx, &live, time.Hour); err != nil {
				t.Fatalf("extend: %v", err)
			}
			failed := one("worker-fail", time.Hour)
			if err := q.Fail(ctx, &failed); err != nil { // a retry left: WAIT again, due now
				t.Fatalf("fail: %v", err)
			}
			three, err := q.Claim(ctx, claim.Request{Owner: "worker-fail", Max: 3, Lease: time.Hour})
			if err != nil || len(three) != 3 || three[2].ID != failed.ID || three[2].Retries != 1 {
				t.Fatalf("claim after a failure: %+v, %v; want the 2 waiting rows, then row %d with 1 retry", three, err, failed.ID)
			}
			if err := q.Fail(ctx, &three[2]); err != nil { // 2 failures, 1 allowed: FAILED
				t.Fatalf("second fail: %v", err)
			}
			for i := range three[:2] {
				if err := q.GiveBack(ctx, &three[i]); err != nil {
					t.Fatalf("give back: %v", err)
				}
			}
			dead := one("dead-worker", time.Millisecond)
			if dead.ID != three[0].ID {
				t.Fatalf("dead-worker claimed row %d; want %d, given back and due first", dead.ID, three[0].ID)
			}
			given := three[1]

			counts := map[string]int{}
			rows, err := db.QueryContext(ctx, "SELECT state, COUNT(*) FROM "+table+" GROUP BY state")
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var state string
				var n int
				if err := rows.Scan(&state, &n); err != nil {
					t.Fatal(err)
				}
				counts[state] = n
			}
			_ = rows.Close()
			if counts["RUNNING"] != 2 || counts["DONE"] != 1 || counts["FAILED"] != 1 || counts["WAIT"] != 1 || len(counts) != 4 {
				t.Fatalf("the table holds %v; want RUNNING 2, DONE 1, FAILED 1, WAIT 1", counts)
			}

			args := append([]string{"--dsn", cliDSN, "--table", table, "--status", "ready=WAIT,claimed=RUNNING", "--status", "done=DONE,failed=FAILED"}, userColumnFlags...)
			ls := func(extra ...string) claimsView {
				t.Helper()
				r := runCmd(t, false, nil, append(append([]string{"claims", "ls", "-o", "json"}, args...), extra...)...)
				var v claimsView
				if r.err != nil || json.Unmarshal([]byte(r.stdout), &v) != nil {
					t.Fatalf("claims ls %v: %v\n%s%s", extra, r.err, r.stdout, r.stderr)
				}
				return v
			}
			deadline := time.Now().Add(30 * time.Second)
			var all claimsView
			for {
				all = ls("--all")
				if slices.ContainsFunc(all.Rows, func(r claimRowView) bool { return r.State == "overdue" }) || time.Now().After(deadline) {
					break
				}
				time.Sleep(5 * time.Millisecond) // until the database clock passes the 1ms lease
			}
			got := map[int64]string{}
			for _, r := range all.Rows {
				got[r.ID] = r.State + "/" + r.Owner
			}
			want := map[int64]string{done.ID: "done/worker-done", failed.ID: "failed/worker-fail", given.ID: "ready/",
				live.ID: "claimed/worker-live", dead.ID: "overdue/dead-worker"}
			if len(got) != len(want) {
				t.Fatalf("claims ls --all: %v; want %v", got, want)
			}
			for id, w := range want {
				if got[id] != w {
					t.Fatalf("claims ls --all: row %d is %q; want %q (all: %v)", id, got[id], w, got)
				}
			}
			if v := ls(); len(v.Rows) != 3 {
				t.Fatalf("claims ls: %+v; want the claimed, overdue and failed rows", v.Rows)
			}

			// Without --status the claimed rows' RUNNING matches no value
			// (DONE and FAILED do match done and failed where the collation
			// ignores case, as MariaDB's does): no claimed or overdue row is
			// listed, and the listing says why.
			plain := append([]string{"claims", "ls", "--dsn", cliDSN, "--table", table}, userColumnFlags...)
			if r := runCmd(t, false, nil, plain...); r.err != nil || strings.Contains(r.stdout, "worker-live") || strings.Contains(r.stdout, "dead-worker") ||
				!strings.Contains(r.stderr, "rows of "+table+" have a status other than") || !strings.Contains(r.stderr, "--status") {
				t.Fatalf("claims ls without --status: %v\nstdout %q\nstderr %q", r.err, r.stdout, r.stderr)
			}

			// Bad mappings, each while dead-worker has a row a release would
			// give back: a usage error in one line, and no row changed.
			before := snapshotRows(t, db, table)
			for _, bad := range []struct {
				args []string
				want string
			}{
				{[]string{"--status", "bogus=X"}, `unknown state "bogus"`},
				{[]string{"--status", "ready="}, "the value of ready is missing"},
				{[]string{"--status", "ready"}, "STATE=VALUE"},
				{[]string{"--status", "ready=WAIT,claimed=WAIT"}, `ready and claimed both map to "WAIT"`},
				{[]string{"--status", "ready=WAIT", "--status", "ready=NEW"}, "ready is given twice"},
				{[]string{"--status", "ready=claimed"}, "must all differ"},
				{[]string{"--column", "claimed_until=lease_until"}, "lease_until (claimed_until)"},
				{[]string{"--column", "type=kind"}, "kind (type)"},
				{[]string{"--column", "version="}, "version is required"},
				{[]string{"--column", "owner=worker", "--column", "owner=worker"}, "--column owner is given twice"},
			} {
				cmdArgs := []string{"claims", "release", "--owner", "dead-worker", "--yes", "--dsn", cliDSN, "--table", table}
				for i := 0; i < len(userColumnFlags); i += 2 { // the mapping, less a role the bad flag maps again
					role, _, _ := strings.Cut(userColumnFlags[i+1], "=")
					if !slices.ContainsFunc(bad.args, func(a string) bool { return strings.HasPrefix(a, role+"=") }) {
						cmdArgs = append(cmdArgs, userColumnFlags[i:i+2]...)
					}
				}
				cmdArgs = append(cmdArgs, bad.args...)
				if !slices.Contains(bad.args, "--status") {
					cmdArgs = append(cmdArgs, "--status", "ready=WAIT,claimed=RUNNING,done=DONE,failed=FAILED")
				}
				r := runCmd(t, false, nil, cmdArgs...)
				if code := ExitCode(r.err); code != CodeUsage || !strings.Contains(r.err.Error(), bad.want) || strings.Contains(r.err.Error(), "\n") {
					t.Errorf("release %v: exit %d, %v; want exit 2 in one line saying %q", bad.args, code, r.err, bad.want)
				}
				if after := snapshotRows(t, db, table); after != before {
					t.Fatalf("release %v changed rows:\n%s\nwas\n%s", bad.args, after, before)
				}
			}

			// A dry run finds dead-worker's overdue row and changes nothing.
			rel := append([]string{"claims", "release", "--owner", "dead-worker"}, args...)
			r := runCmd(t, false, nil, append(rel, "--dry-run")...)
			if r.err != nil || !strings.Contains(r.stdout, "1 overdue") || !strings.Contains(r.stdout, "Nothing changed") {
				t.Fatalf("release --dry-run: %v\n%s", r.err, r.stdout)
			}
			if after := snapshotRows(t, db, table); after != before {
				t.Fatalf("the dry run changed rows:\n%s\nwas\n%s", after, before)
			}
			// The live claim is not given back without --force.
			if r := runCmd(t, false, nil, append([]string{"claims", "release", "--owner", "worker-live", "--yes"}, args...)...); ExitCode(r.err) != CodeNegative {
				t.Fatalf("release of a live claim: %v; want exit 3", r.err)
			}
			r = runCmd(t, false, nil, append(rel, "--yes")...)
			if r.err != nil || !strings.Contains(r.stdout, "Gave back 1 rows") {
				t.Fatalf("release: %v\n%s", r.err, r.stdout)
			}
			var state string
			var worker, until sql.NullString
			if err := db.QueryRowContext(ctx, "SELECT state, worker, lease_end FROM "+table+" WHERE order_id = "+strconv.FormatInt(dead.ID, 10)).Scan(&state, &worker, &until); err != nil {
				t.Fatal(err)
			}
			if state != "WAIT" || worker.Valid || until.Valid {
				t.Fatalf("released row: state %q, worker %v, lease_end %v; want WAIT, unowned, no lease", state, worker, until)
			}
			// It is ready again: the next claim takes it (the given-back row
			// is due as early).
			got2, err := q.Claim(ctx, claim.Request{Owner: "worker-next", Max: 2})
			if err != nil || len(got2) != 2 || (got2[0].ID != dead.ID && got2[1].ID != dead.ID) {
				t.Fatalf("claim after the release: %+v, %v; want row %d among them", got2, err, dead.ID)
			}
			if r := runCmd(t, false, nil, append(rel, "--yes")...); ExitCode(r.err) != CodeNegative {
				t.Fatalf("a second release: %v; want exit 3", r.err)
			}
		})
	}
}
