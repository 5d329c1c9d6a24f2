package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/memory"
)

// TestMemoryBackendRunAndList drives `run` and `locks ls` on the
// in-process memory backend, which is not database/sql: run creates the
// table and runs the command under the lock; while another holder has it,
// run skips the command and locks ls names that holder.
func TestMemoryBackendRunAndList(t *testing.T) {
	dsn := "memory://cmd-" + strings.ReplaceAll(dialects.NewOwner(), ":", "-")
	marker := filepath.Join(t.TempDir(), "ran")
	r := runCmd(t, false, nil, "run", "--dsn", dsn, "--create-table", "--name", "job", "--", "touch", marker)
	if r.err != nil {
		t.Fatalf("run: %v\n%s", r.err, r.stderr)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the command did not run: %v", err)
	}

	b, err := memory.Open(strings.TrimPrefix(dsn, "memory://"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := b.Locker(dialects.StrategyTable, dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	lease, err := l.Acquire(context.Background(), "job", dialects.Options{Owner: "other-node"})
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release(context.Background())

	skipped := filepath.Join(t.TempDir(), "skipped")
	r = runCmd(t, false, nil, "run", "--dsn", dsn, "--name", "job", "--skipped-exit-code", "7", "--", "touch", skipped)
	var exit *ExitError
	if !errors.As(r.err, &exit) || exit.Code != 7 {
		t.Fatalf("run on a held lock: %v (%T); want exit 7\n%s", r.err, r.err, r.stderr)
	}
	if _, err := os.Stat(skipped); err == nil {
		t.Fatal("the command ran although the lock was held")
	}

	r = runCmd(t, false, nil, "locks", "ls", "--dsn", dsn, "-o", "json")
	if r.err != nil {
		t.Fatalf("locks ls: %v\n%s", r.err, r.stderr)
	}
	var listed []struct {
		Name, Owner, State string
	}
	if err := json.Unmarshal([]byte(r.stdout), &listed); err != nil {
		t.Fatalf("locks ls -o json: %v\n%s", err, r.stdout)
	}
	if len(listed) != 1 || listed[0].Name != "job" || listed[0].Owner != "other-node" || listed[0].State != "held" {
		t.Errorf("locks ls = %+v; want job held by other-node\n%s", listed, r.stdout)
	}
}
