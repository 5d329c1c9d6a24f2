package cmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

// nsListedLock is the part of `locks ls -o json` the namespace tests read.
type nsListedLock struct {
	Name      *string `json:"name"`
	Namespace *string `json:"namespace"`
	State     string  `json:"state"`
	Owner     *string `json:"owner"`
}

func listJSON(t *testing.T, args ...string) []nsListedLock {
	t.Helper()
	r := runWithInput(t, false, "", append([]string{"locks", "ls", "-o", "json"}, args...)...)
	if r.err != nil {
		t.Fatalf("locks ls %v: %v", args, r.err)
	}
	var out []nsListedLock
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("locks ls %v: %v in %q", args, err, r.stdout)
	}
	return out
}

func describeListed(locks []nsListedLock) string {
	var parts []string
	for _, l := range locks {
		parts = append(parts, str(l.Namespace)+"|"+str(l.Name)+"|"+l.State+"|"+str(l.Owner))
	}
	return strings.Join(parts, ", ")
}

// TestNamespaceOnOneSQLiteFile: on one SQLite file the lock "nightly" of
// namespace prod (stored as "prod::nightly") keeps --namespace prod and
// x-namespace=prod runs out, while --namespace staging runs; locks ls
// --namespace shows only that namespace's locks with bare names, and
// without it every lock with its namespace; unlock --namespace frees only
// that namespace's lock.
func TestNamespaceOnOneSQLiteFile(t *testing.T) {
	db, locker := sqliteLocks(t)
	hold(t, locker, "prod::nightly", "node-p:1")
	hold(t, locker, "nightly", "node-n:1")
	marker := filepath.Join(t.TempDir(), "ran")

	for _, args := range [][]string{
		{"--dsn", db, "--namespace", "prod"},
		{"--dsn", db + "?x-namespace=prod"},
		{"--dsn", db + "?x-namespace=staging", "--namespace", "prod"},
	} {
		r := execRun(t, context.Background(), "", append(append([]string{"run"}, args...), "--name", "nightly", "--", "touch", marker)...)
		if r.code != CodeOK || r.err == nil || !strings.Contains(r.err.Error(), `lock "prod::nightly" is held by node-p:1`) {
			t.Fatalf("run %v: exit %d, %v; want skipped, held by node-p:1", args, r.code, r.err)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("run %v: the command ran in a namespace whose lock is held", args)
		}
	}
	r := execRun(t, context.Background(), "", "run", "--dsn", db, "--namespace", "staging", "--name", "nightly", "--at-least", "10m", "--", "touch", marker)
	if r.err != nil {
		t.Fatalf("run in namespace staging: %v", r.err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatal("run in namespace staging did not run the command")
	}

	if got, want := describeListed(listJSON(t, "--dsn", db, "--namespace", "prod")), "prod|nightly|held|node-p:1"; got != want {
		t.Errorf("locks ls --namespace prod: %s; want %s", got, want)
	}
	if got := describeListed(listJSON(t, "--dsn", db+"?x-namespace=staging")); !strings.HasPrefix(got, "staging|nightly|held|") || strings.Contains(got, ",") {
		t.Errorf("locks ls with x-namespace=staging: %s; want only staging's nightly", got)
	}
	if got := describeListed(listJSON(t, "--dsn", db, "--namespace", "prod", "--name", "night*")); got != "prod|nightly|held|node-p:1" {
		t.Errorf("locks ls --namespace prod --name 'night*': %s", got)
	}
	if got := listJSON(t, "--dsn", db, "--namespace", "qa"); len(got) != 0 {
		t.Errorf("locks ls --namespace qa: %s; want nothing", describeListed(got))
	}
	all := describeListed(listJSON(t, "--dsn", db))
	for _, want := range []string{"|nightly|held|node-n:1", "prod|nightly|held|node-p:1", "staging|nightly|held|"} {
		if !strings.Contains(all, want) {
			t.Errorf("locks ls: %s; want an entry %s", all, want)
		}
	}

	u := runWithInput(t, false, "", "unlock", "--dsn", db, "--namespace", "prod", "nightly", "--yes", "--force", "-o", "json")
	if u.err != nil {
		t.Fatalf("unlock --namespace prod nightly: %v", u.err)
	}
	var report struct {
		Before nsListedLock `json:"before"`
	}
	if err := json.Unmarshal([]byte(u.stdout), &report); err != nil || str(report.Before.Namespace) != "prod" || str(report.Before.Name) != "nightly" {
		t.Errorf("unlock report %q (%v): want before.namespace prod, before.name nightly", u.stdout, err)
	}
	assertFree(t, locker, "prod::nightly")
	if got := describeListed(listJSON(t, "--dsn", db, "--state", "held")); !strings.Contains(got, "|nightly|held|node-n:1") || !strings.Contains(got, "staging|nightly|held|") || strings.Contains(got, "prod|") {
		t.Errorf("after unlock --namespace prod: %s; want the bare and staging locks still held, prod's not", got)
	}
}

// TestLocksListNameMatchesWithinNamespace: without --namespace, a lock is
// listed by its name within its namespace, and --name matches that name as
// well as the stored one.
func TestLocksListNameMatchesWithinNamespace(t *testing.T) {
	db, locker := sqliteLocks(t)
	hold(t, locker, "staging::ns-job", "node-s:1")
	hold(t, locker, "ns-bare", "node-b:1")
	hold(t, locker, "other", "node-o:1")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--name", "ns-job"}, "staging|ns-job|held|node-s:1"},
		{[]string{"--name", "ns-*"}, "|ns-bare|held|node-b:1, staging|ns-job|held|node-s:1"},
		{[]string{"--name", "staging::ns-job"}, "staging|ns-job|held|node-s:1"},
		{[]string{"--name", "staging::*"}, "staging|ns-job|held|node-s:1"},
		{[]string{"--name", "prod::ns-job"}, ""},
		{[]string{"--namespace", "staging", "--name", "ns-job"}, "staging|ns-job|held|node-s:1"},
		{[]string{"--namespace", "prod", "--name", "ns-job"}, ""},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			if got := describeListed(listJSON(t, append([]string{"--dsn", db}, tc.args...)...)); got != tc.want {
				t.Errorf("locks ls %v: %q; want %q", tc.args, got, tc.want)
			}
		})
	}
}

// TestNamespaceBadValue: a bad --namespace or x-namespace is a usage error
// (exit 2) of one line on every command that takes it, before anything
// connects.
func TestNamespaceBadValue(t *testing.T) {
	db, _ := sqliteLocks(t)
	commands := [][]string{
		{"run", "--name", "n"},
		{"locks", "ls"},
		{"unlock", "--yes", "n"},
		{"selfcheck"},
	}
	for _, bad := range []string{"a:b", " ", "x\x00y", "job*", strings.Repeat("n", dialects.MaxNamespaceRunes+1), "\xff"} {
		for _, c := range commands {
			for _, via := range []string{"flag", "dsn"} {
				args := append([]string{}, c...)
				if via == "flag" {
					args = append(args, "--dsn", db, "--namespace", bad)
				} else {
					args = append(args, "--dsn", db+"?x-namespace="+urlEscape(bad))
				}
				if c[0] == "run" {
					args = append(args, "--", "true")
				}
				r := runWithInput(t, false, "", args...)
				msg := ""
				if r.err != nil {
					msg = r.err.Error()
				}
				if code := ExitCode(r.err); code != CodeUsage || strings.Contains(msg, "\n") || !strings.Contains(msg, "namespace") {
					t.Errorf("%s %s %q: exit %d, %q; want exit 2 and one line about the namespace", c[0], via, bad, code, msg)
				}
			}
		}
	}
}

func urlEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' {
			b.WriteByte(c)
		} else {
			b.WriteString("%" + strings.ToUpper(string("0123456789abcdef"[c>>4])+string("0123456789abcdef"[c&15])))
		}
	}
	return b.String()
}
