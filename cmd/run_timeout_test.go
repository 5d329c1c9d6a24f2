//go:build unix

package cmd

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Without --timeout, run bounds connecting and acquiring by 30s, plus
// --wait when it waits; --timeout replaces that bound (0: none).
func TestRunAcquireTimeoutDefault(t *testing.T) {
	for _, tc := range []struct {
		given   bool
		timeout time.Duration
		wait    time.Duration
		want    time.Duration
	}{
		{want: 30 * time.Second},
		{wait: 10 * time.Minute, want: 10*time.Minute + 30*time.Second},
		{given: true, timeout: 5 * time.Second, wait: time.Minute, want: 5 * time.Second},
		{given: true, timeout: 0, want: 0},
	} {
		o := &RunOptions{Global: &GlobalOptions{Timeout: tc.timeout}, TimeoutGiven: tc.given, Wait: tc.wait}
		if got := o.acquireTimeout(); got != tc.want {
			t.Errorf("given %v, --timeout %s, --wait %s: %s, want %s", tc.given, tc.timeout, tc.wait, got, tc.want)
		}
	}
	// The flag parsing sets TimeoutGiven only when --timeout is written.
	for _, args := range [][]string{{"run", "--name", "x", "--", "true"}, {"run", "--timeout", "0", "--name", "x", "--", "true"}} {
		var got *RunOptions
		f := testFactory(nil, map[string]string{}, t.TempDir())
		ios, _, _, _ := testStreams()
		f.IO = ios
		root := NewCmdRoot(f, &GlobalOptions{})
		for _, c := range root.Commands() {
			if c.Name() == "run" {
				root.RemoveCommand(c)
			}
		}
		run := NewCmdRun(f, &GlobalOptions{}, func(_ context.Context, o *RunOptions) error { got = o; return nil })
		root.AddCommand(run)
		addSharedFlagsTo(run, &GlobalOptions{})
		root.SetArgs(args)
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
		if want := slices.Contains(args, "--timeout"); got.TimeoutGiven != want {
			t.Errorf("%v: TimeoutGiven %v, want %v", args, got.TimeoutGiven, want)
		}
	}
}

// A database that accepts connections and then answers nothing fails the
// run after --timeout with one line and exit 1; the command never starts.
func TestRunTimeoutOnStalledDatabase(t *testing.T) {
	for _, s := range liveServers(t) {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			p := proxy(t, s)
			p.Stall()
			marker := filepath.Join(t.TempDir(), "ran")
			name := "stalled-" + strconv.FormatInt(time.Now().UnixNano(), 36)
			r := execRun(t, context.Background(), "", "--timeout", "1s", "run", "--dsn", s.via(p.Addr()), "--name", name, "--", "touch", marker)
			if r.code != CodeError {
				t.Fatalf("exit %d (%v), want %d", r.code, r.err, CodeError)
			}
			msg := r.err.Error()
			if !strings.Contains(msg, `gave up on lock "`+name+`" after --timeout 1s`) || !strings.Contains(msg, "timed out") || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line naming the lock, --timeout 1s and the time-out", msg)
			}
			if r.took > 20*time.Second {
				t.Errorf("took %s with --timeout 1s", r.took)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("the command ran")
			}
		})
	}
}

// A database that connects but blocks the acquire (the lock table locked
// by another transaction) fails the run after --timeout as well.
func TestRunTimeoutWhileAcquireBlocks(t *testing.T) {
	raw := liveSessionDSN(t)
	table := "run_blocked_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	r := execRun(t, context.Background(), "", "run", "--dsn", raw, "--name", "setup", "--table", table, "--create-table", "--", "true")
	if r.err != nil {
		t.Fatal(r.err)
	}
	db, err := sql.Open("pgx", raw)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = db.Exec("DROP TABLE IF EXISTS " + table)
		_ = db.Close()
	})
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.Exec("LOCK TABLE " + table + " IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	r = execRun(t, context.Background(), "", "--timeout", "1s", "run", "--dsn", raw, "--name", "blocked", "--table", table, "--", "touch", marker)
	if r.code != CodeError || !strings.Contains(r.err.Error(), `gave up on lock "blocked" after --timeout 1s`) {
		t.Fatalf("exit %d (%v), want 1 naming --timeout 1s", r.code, r.err)
	}
	if r.took > 20*time.Second {
		t.Errorf("took %s with --timeout 1s", r.took)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran")
	}
}
