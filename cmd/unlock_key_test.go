package cmd

import (
	"strings"
	"testing"
)

func TestUnlockKeyRefusals(t *testing.T) {
	path, db := lockFile(t)
	_, untilBefore := shedRow(t, db, "held-job")
	cases := []struct {
		name  string
		args  []string
		code  int
		wants []string
	}{
		{"no --kill-session", []string{"--key", "4097083626", "--yes"}, CodeUsage, []string{"--key names a session lock", "add --kill-session"}},
		{"a name too", []string{"held-job", "--key", "4097083626", "--kill-session", "--yes"}, CodeUsage, []string{"give no lock name with it"}},
		{"with --force", []string{"--key", "4097083626", "--kill-session", "--force", "--yes"}, CodeUsage, []string{"--force, --owner, --table and --preset apply to table locks"}},
		{"with --table", []string{"--key", "4097083626", "--kill-session", "--table", "shedlock", "--yes"}, CodeUsage, []string{"apply to table locks"}},
		{"with --namespace", []string{"--key", "4097083626", "--kill-session", "--namespace", "staging", "--yes"}, CodeUsage, []string{"give no --namespace with it"}},
		{"no session locks on SQLite", []string{"--key", "4097083626", "--kill-session", "--yes"}, CodeUsage, []string{"no session locks to find by key"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runWithInput(t, false, "", append([]string{"unlock", "--dsn", path}, tc.args...)...)
			if got := ExitCode(r.err); got != tc.code {
				t.Fatalf("exit code %d, want %d (error %v)", got, tc.code, r.err)
			}
			for _, w := range tc.wants {
				if !strings.Contains(r.err.Error(), w) {
					t.Errorf("error %q does not say %q", r.err, w)
				}
			}
			if r.stdout != "" {
				t.Errorf("a refusal printed %q", r.stdout)
			}
			if owner, until := shedRow(t, db, "held-job"); owner != "host-a" || until != untilBefore {
				t.Errorf("held-job changed: %s until %s", owner, until)
			}
		})
	}
}

// A numeric NAME that is not held says how to free a lock by its key.
func TestUnlockNumericNameSuggestsKey(t *testing.T) {
	if got := keyHint("4097083626"); !strings.Contains(got, "--key 4097083626 --kill-session") {
		t.Errorf("keyHint of a number: %q", got)
	}
	if got := keyHint("nightly-report"); got != "" {
		t.Errorf("keyHint of a name: %q", got)
	}
}
