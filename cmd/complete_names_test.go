package cmd

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/spf13/cobra"

	"github.com/schedlock/schedlock/internal/testnet"
)

// Lock names complete from the command's own database: every name it
// lists (free ones too), in the command's namespace, for the first
// positional argument or --name (in the tables of --table/--preset),
// unlock's --owner with the owner of the lock named, and --table with the
// lock tables the database has; nothing, silently, when the database
// cannot be opened — and a missing SQLite file is not created.
func TestLockNameCompletion(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "jobs.db")
	for _, args := range [][]string{
		{"--name", "nightly-report"}, {"--name", "nightly-backup"}, {"--name", "weekly", "--owner", "node-7:weekly"},
		{"--namespace", "staging", "--name", "nightly-report"},
		{"--preset", "shedlock", "--name", "shed-job"},
	} {
		r := runCmd(t, false, nil, append(append([]string{"run", "--dsn", db, "--create-table"}, args...), "--", "true")...)
		if r.err != nil {
			t.Fatalf("run %v: %v", args, r.err)
		}
	}
	missing := filepath.Join(dir, "typo.db")
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"unlock", "--dsn", db, "nightly"}, []string{"nightly-backup", "nightly-report"}},
		{[]string{"unlock", "--dsn", db, "nightly-report", ""}, nil},
		{[]string{"pause", "--dsn", db, "--namespace", "staging", ""}, []string{"nightly-report"}},
		{[]string{"resume", "--dsn", db, "w"}, nil}, // weekly is not paused
		{[]string{"locks", "history", "--dsn", db, ""}, []string{"nightly-backup", "nightly-report", "staging::nightly-report", "weekly"}},
		{[]string{"locks", "history", "--dsn", db, "--table", ""}, []string{"schedlock"}},
		{[]string{"locks", "ls", "--dsn", db, "--name", "st"}, []string{"staging::nightly-report"}},
		{[]string{"run", "--dsn", db, "--name", "nightly-r"}, []string{"nightly-report"}},
		{[]string{"unlock", "--dsn", db, "weekly", "--owner", ""}, []string{"node-7:weekly"}},
		{[]string{"unlock", "--dsn", db, "--preset", "shedlock", "s"}, []string{"shed-job"}},
		{[]string{"locks", "ls", "--dsn", db, "--table", ""}, []string{"schedlock", "shedlock"}},
		{[]string{"pause", "nightly-report", "--dsn", db, "--table", "shed"}, []string{"shedlock"}},
		{[]string{"run", "--dsn", db, "--table", "shedlock", "--table", ""}, []string{"schedlock", "shedlock"}},
		{[]string{"unlock", "--dsn", db, "weekly", "--owner", "x"}, nil},
		{[]string{"unlock", "--dsn", db, "--owner", ""}, nil},
		{[]string{"unlock", "--dsn", "sqlite:" + missing, ""}, nil},
		{[]string{"unlock", "--dsn", "redis://" + testnet.FreeAddr(t) + "/0", ""}, nil},
	}
	for _, tc := range cases {
		got, directive := complete(t, tc.args...)
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%v offers %q, want %q", tc.args, got, tc.want)
		}
		if directive != cobra.ShellCompDirectiveNoFileComp {
			t.Errorf("%v: directive %d, want no file names", tc.args, directive)
		}
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("completing against a missing SQLite file created it (%v)", err)
	}
}

// pause completes the locks a pause can hold — not Liquibase's — and
// resume only the paused ones.
func TestPauseResumeCompletion(t *testing.T) {
	path, _ := lockFile(t)
	if r := runCmd(t, false, nil, "pause", "dead-job", "--dsn", path, "--for", "1h", "--yes"); r.err != nil {
		t.Fatalf("pause: %v\n%s", r.err, r.stderr)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"pause", "--dsn", path, ""}, []string{"dead-job", "held-job"}},
		{[]string{"pause", "--dsn", path, "l"}, nil},
		{[]string{"resume", "--dsn", path, ""}, []string{"dead-job"}},
		{[]string{"resume", "--dsn", path, "dead-job", ""}, nil},
		{[]string{"unlock", "--dsn", path, "l"}, []string{"liquibase"}},
	} {
		got, _ := complete(t, tc.args...)
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%v offers %q, want %q", tc.args, got, tc.want)
		}
	}
}
