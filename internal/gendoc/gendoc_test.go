package gendoc_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/cmd"
	"github.com/schedlock/schedlock/internal/gendoc"
	"github.com/schedlock/schedlock/internal/iostreams"
)

func root() *cmd.Factory {
	f := cmd.NewFactory()
	f.IO, _, _, _ = iostreams.Test()
	return f
}

func TestManPages(t *testing.T) {
	dir := t.TempDir()
	date := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	if err := gendoc.ManPages(cmd.NewCmdRoot(root(), &cmd.GlobalOptions{}), dir, "v1.2.3", date); err != nil {
		t.Fatal(err)
	}
	for _, page := range []string{"schedlock.1", "schedlock-selfcheck.1", "schedlock-locks-ls.1", "schedlock-unlock.1", "schedlock-run.1", "schedlock-completion-bash.1"} {
		b, err := os.ReadFile(filepath.Join(dir, page))
		if err != nil {
			t.Errorf("no %s: %v", page, err)
			continue
		}
		text := string(b)
		if !strings.Contains(text, `.TH "SCHEDLOCK" "1" "Mar 2025" "schedlock v1.2.3" "schedlock manual"`) {
			t.Errorf("%s: header %.200q", page, text)
		}
		if !strings.Contains(text, ".SH EXAMPLE") {
			t.Errorf("%s has no EXAMPLE section", page)
		}
	}
	// Pages are the same for the same date: nothing depends on the clock.
	again := t.TempDir()
	if err := gendoc.ManPages(cmd.NewCmdRoot(root(), &cmd.GlobalOptions{}), again, "v1.2.3", date); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "schedlock-selfcheck.1"))
	b, _ := os.ReadFile(filepath.Join(again, "schedlock-selfcheck.1"))
	if string(a) != string(b) {
		t.Error("two generations of the same page differ")
	}
}

func TestCompletions(t *testing.T) {
	dir := t.TempDir()
	if err := gendoc.Completions(cmd.NewCmdRoot(root(), &cmd.GlobalOptions{}), dir); err != nil {
		t.Fatal(err)
	}
	for file, marker := range map[string]string{"schedlock": "__start_schedlock", "_schedlock": "#compdef schedlock", "schedlock.fish": "complete -c schedlock"} {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil || !strings.Contains(string(b), marker) {
			t.Errorf("%s: %v, lacks %q", file, err, marker)
		}
	}
}
