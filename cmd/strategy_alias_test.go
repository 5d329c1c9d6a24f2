package cmd

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestStrategyLeaseIsTable: --strategy lease and x-strategy=lease take the
// table strategy's lease, as --strategy table does; locks ls shows it
// under that strategy.
func TestStrategyLeaseIsTable(t *testing.T) {
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "locks.db") + "?x-create-file=true"
	for _, args := range [][]string{
		{"run", "--dsn", dsn, "--strategy", "lease", "--create-table", "--name", "alias-flag", "--at-least", "10m", "--", "true"},
		{"run", "--dsn", dsn + "&x-strategy=lease", "--name", "alias-option", "--at-least", "10m", "--", "true"},
	} {
		if r := runCmd(t, false, nil, args...); r.err != nil {
			t.Fatalf("%v: %v\n%s", args, r.err, r.stderr)
		}
	}
	r := runCmd(t, false, nil, "locks", "ls", "--dsn", dsn, "--strategy", "lease", "-o", "json")
	if r.err != nil {
		t.Fatalf("locks ls --strategy lease: %v\n%s", r.err, r.stderr)
	}
	for _, name := range []string{"alias-flag", "alias-option"} {
		if !strings.Contains(r.stdout, `"name": "`+name+`"`) {
			t.Errorf("locks ls lacks the lease of %s kept by its at-least: %s", name, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, `"strategy": "table"`) {
		t.Errorf("locks ls: %s; want the leases under the table strategy", r.stdout)
	}
	r = runCmd(t, false, nil, "run", "--dsn", dsn, "--strategy", "leases", "--name", "x", "--", "true")
	if r.err == nil || !strings.Contains(r.stderr+r.err.Error(), "use session or table (table is also called lease)") {
		t.Errorf("--strategy leases: %v %s; want the strategies named", r.err, r.stderr)
	}
}
