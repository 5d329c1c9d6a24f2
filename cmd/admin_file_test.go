//go:build unix

package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Administrative commands refuse a SQLite path that does not exist, with
// the path in the message, and create no file: a mistyped path would
// otherwise list, unlock or write into an empty database of its own.
func TestAdminRefusesMissingSQLiteFile(t *testing.T) {
	typo := filepath.Join(t.TempDir(), "lcoks.db")
	for _, args := range [][]string{
		{"detect"},
		{"locks", "ls"},
		{"locks", "history", "nightly"},
		{"unlock", "nightly", "--force", "--yes"},
		{"pause", "nightly", "--for", "1h", "--yes"},
		{"claims", "ls"},
		{"bench", "--claims", "--duration", "1s"},
		{"bench", "--duration", "1s"},
	} {
		r := execRun(t, context.Background(), "", append(args, "--dsn", "sqlite:"+typo)...)
		want := "SQLite file " + typo + " does not exist"
		if r.err == nil || !strings.Contains(r.err.Error(), want) {
			t.Errorf("%s: exit %d (%v), want an error saying %q", strings.Join(args, " "), r.code, r.err, want)
		}
		if _, err := os.Stat(typo); err == nil {
			t.Fatalf("%s created the file", strings.Join(args, " "))
		}
	}
}
