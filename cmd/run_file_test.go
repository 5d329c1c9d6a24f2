//go:build unix

package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A mistyped SQLite path is refused, and nothing is created; with
// --create-table the file is created with its lock table.
func TestRunRefusesMissingSQLiteFile(t *testing.T) {
	dir := t.TempDir()
	typo := filepath.Join(dir, "lcoks.db")
	marker := filepath.Join(dir, "ran")
	for _, raw := range []string{typo, "sqlite:" + typo} {
		r := execRun(t, context.Background(), "", "run", "--dsn", raw, "--name", "x", "--", "touch", marker)
		want := "SQLite file " + typo + " does not exist: check the path on every node, or give --create-table"
		if r.code != CodeError || !strings.Contains(r.err.Error(), want) {
			t.Errorf("%s: exit %d (%v), want 1 with %q", raw, r.code, r.err, want)
		}
	}
	if _, err := os.Stat(typo); err == nil {
		t.Fatal("the refused run created the file")
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the command ran")
	}
	r := execRun(t, context.Background(), "", "run", "--dsn", typo, "--name", "x", "--create-table", "--", "touch", marker)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatal("with --create-table the command did not run")
	}
	// The file exists now: no --create-table needed.
	if r := execRun(t, context.Background(), "", "run", "--dsn", typo, "--name", "x", "--", "true"); r.err != nil {
		t.Fatal(r.err)
	}
}
