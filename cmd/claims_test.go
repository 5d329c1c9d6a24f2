package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/schedlock/schedlock/dialects/claimtable"
	"github.com/schedlock/schedlock/internal/output"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/claim"
)

// claimsFixture makes a SQLite task table with two live claims of
// worker-7 and one overdue claim of dead-worker, and returns its DSN.
func claimsFixture(t *testing.T) string {
	t.Helper()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "tasks.db")
	ctx := context.Background()
	q, err := claim.Open(ctx, dsn+"?x-create-file=true", claim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if err := q.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	if err := q.Add(ctx, claim.NewTask{Type: "mail"}, claim.NewTask{Type: "mail"}, claim.NewTask{Type: "report", Priority: 9}); err != nil {
		t.Fatal(err)
	}
	if got, err := q.Claim(ctx, claim.Request{Owner: "worker-7", Max: 2, Lease: time.Hour}); err != nil || len(got) != 2 {
		t.Fatalf("claim: %d, %v", len(got), err)
	}
	if got, err := q.Claim(ctx, claim.Request{Owner: "dead-worker", Max: 1, Lease: time.Millisecond}); err != nil || len(got) != 1 {
		t.Fatalf("claim: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		overdue := 0
		for _, r := range claimsLs(t, dsn).Rows {
			if r.State == "overdue" {
				overdue++
			}
		}
		if overdue == 1 {
			return dsn
		}
		if time.Now().After(deadline) {
			t.Fatal("the 1ms claim never became overdue")
		}
		time.Sleep(5 * time.Millisecond) // polling the database clock
	}
}

func claimsLs(t *testing.T, dsn string, args ...string) claimsView {
	t.Helper()
	r := runCmd(t, false, nil, append([]string{"claims", "ls", "--dsn", dsn, "-o", "json"}, args...)...)
	if r.err != nil {
		t.Fatalf("claims ls: %v (%s)", r.err, r.stderr)
	}
	var v claimsView
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("claims ls -o json: %v\n%s", err, r.stdout)
	}
	return v
}

func TestClaimsListAndRelease(t *testing.T) {
	dsn := claimsFixture(t)
	v := claimsLs(t, dsn)
	got := map[string]int{}
	for _, r := range v.Rows {
		got[r.State+"/"+r.Owner]++
	}
	if got["claimed/worker-7"] != 2 || got["overdue/dead-worker"] != 1 || len(v.Rows) != 3 {
		t.Fatalf("claims ls: %+v; want 2 claimed by worker-7, 1 overdue of dead-worker", v.Rows)
	}
	if only := claimsLs(t, dsn, "--state", "overdue"); len(only.Rows) != 1 {
		t.Fatalf("--state overdue: %+v", only.Rows)
	}

	// No terminal, no --yes: refused before anything is read.
	r := runCmd(t, false, nil, "claims", "release", "--dsn", dsn, "--owner", "dead-worker")
	var usage *UsageError
	if !errors.As(r.err, &usage) || !strings.Contains(r.err.Error(), "--yes") {
		t.Fatalf("release without confirmation: %v; want a usage error naming --yes", r.err)
	}
	// Live claims are not given back without --force (exit 3).
	r = runCmd(t, false, nil, "claims", "release", "--dsn", dsn, "--owner", "worker-7", "--yes")
	var exit *ExitError
	if !errors.As(r.err, &exit) || exit.Code != CodeNegative || !strings.Contains(r.err.Error(), "--force") {
		t.Fatalf("release of live claims: %v; want exit 3 naming --force", r.err)
	}
	// A dry run changes nothing.
	r = runCmd(t, false, nil, "claims", "release", "--dsn", dsn, "--owner", "dead-worker", "--dry-run")
	if r.err != nil || !strings.Contains(r.stdout, "Nothing changed") || !strings.Contains(r.stdout, "1 overdue") {
		t.Fatalf("dry run: %v\n%s", r.err, r.stdout)
	}
	if after := claimsLs(t, dsn, "--state", "overdue"); len(after.Rows) != 1 {
		t.Fatalf("the dry run changed rows: %+v", after.Rows)
	}
	r = runCmd(t, false, nil, "claims", "release", "--dsn", dsn, "--owner", "dead-worker", "--yes")
	if r.err != nil || !strings.Contains(r.stdout, "Gave back 1 rows") {
		t.Fatalf("release: %v\n%s", r.err, r.stdout)
	}
	r = runCmd(t, false, nil, "claims", "release", "--dsn", dsn, "--owner", "worker-7", "--force", "--yes", "-o", "json")
	var rel claimsReleaseView
	if r.err != nil || json.Unmarshal([]byte(r.stdout), &rel) != nil || rel.Released != 2 || !rel.Changed {
		t.Fatalf("forced release: %v\n%s", r.err, r.stdout)
	}
	if left := claimsLs(t, dsn); len(left.Rows) != 0 {
		t.Fatalf("rows still claimed after the releases: %+v", left.Rows)
	}
	if all := claimsLs(t, dsn, "--all"); len(all.Rows) != 3 || all.Rows[0].State != "ready" {
		t.Fatalf("--all after the releases: %+v; want 3 ready rows", all.Rows)
	}
	r = runCmd(t, false, nil, "claims", "release", "--dsn", dsn, "--owner", "nobody", "--yes")
	if !errors.As(r.err, &exit) || exit.Code != CodeNegative {
		t.Fatalf("release of an owner without rows: %v; want exit 3", r.err)
	}
}

func TestClaimsBadInput(t *testing.T) {
	dsn := claimsFixture(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ls", "--column", "claimed_until=lease_end", "--column", "version=row_version"}, "lease_end (claimed_until), row_version (version)"},
		{[]string{"ls", "--column", "nonsense=x"}, "unknown role \"nonsense\"; roles: id, type, payload, status, due_at, priority, retries, max_retries, owner, claimed_until, version, updated_at (see"},
		{[]string{"ls", "--column", "id"}, "ROLE=COLUMN"},
		{[]string{"ls", "--state", "sleeping"}, "--state"},
		{[]string{"ls", "--table", "no_such_tasks"}, "no_such_tasks"},
		{[]string{"release", "--yes"}, "--owner is required"},
	} {
		r := runCmd(t, false, nil, append(append([]string{"claims"}, tc.args...), "--dsn", dsn)...)
		var usage *UsageError
		if !errors.As(r.err, &usage) || !strings.Contains(r.err.Error(), tc.want) {
			t.Errorf("claims %v: %v; want a usage error containing %q", tc.args, r.err, tc.want)
		}
	}
}

func TestClaimsCompletion(t *testing.T) {
	if values, _ := complete(t, "claims", "ls", "--state", ""); strings.Join(values, ",") != "claimed,overdue,failed,ready,done" {
		t.Errorf("--state completes %v", values)
	}
	if values, _ := complete(t, "claims", "release", "--column", "cl"); strings.Join(values, ",") != "claimed_until=" {
		t.Errorf("--column cl completes %v", values)
	}
	if values, _ := complete(t, "claims", "ls", "--status", "ready=WAIT,cl"); strings.Join(values, ",") != "ready=WAIT,claimed=" {
		t.Errorf("--status ready=WAIT,cl completes %v", values)
	}
}

// On a terminal claims ls fits the terminal's width as locks ls does: the
// retries and the due time go first, then the owner wraps; with room,
// every column stays.
func TestClaimsTerminalFitsTheWidth(t *testing.T) {
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	l := &claimtable.Listing{Now: now, Rows: []claimtable.Row{
		{ID: 1, Type: "mail", State: claimtable.StateClaimed, Owner: "worker-7.eu-west-1.compute.internal:4711:9f1c2a7b", Due: now, ClaimedUntil: now.Add(time.Hour), Retries: 1, MaxRetries: 5},
		{ID: 22, Type: "nightly-report", State: claimtable.StateOverdue, Owner: "dead-worker", Due: now.Add(-time.Hour), ClaimedUntil: now.Add(-time.Minute), MaxRetries: 5},
	}}
	for _, width := range []int{200, 100, 80, 60} {
		var buf bytes.Buffer
		if err := writeClaims(&buf, l, output.Table, true, width); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
			if w := twwidth.Width(line); w > width {
				t.Errorf("width %d: a line of %d columns:\n%s", width, w, out)
				break
			}
		}
		if width == 200 && (!strings.Contains(out, "RETRIES") || !strings.Contains(out, "DUE (UTC)")) {
			t.Errorf("width %d: a column was left out though the table fits:\n%s", width, out)
		}
		if width <= 100 && strings.Contains(out, "RETRIES") {
			t.Errorf("width %d: RETRIES, the first to go, is still there:\n%s", width, out)
		}
		if !strings.Contains(out, "│ 22 ") || !strings.Contains(out, "overdue") || !strings.Contains(out, "dead-worker") {
			t.Errorf("width %d: a row lost its id, state or owner:\n%s", width, out)
		}
	}
}
