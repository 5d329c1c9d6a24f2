//go:build unix

package cmd

import (
	"os"
	"testing"

	"github.com/schedlock/schedlock/checks"
)

// TestUnlockOwnerDuringAtLeast: on every store, `unlock NAME --owner O`
// frees a lock O released and its at-least still keeps, as --dry-run
// says it would, and the next run then gets the lock.
func TestUnlockOwnerDuringAtLeast(t *testing.T) {
	for _, store := range []struct{ name, env string }{
		{"redis", "SCHEDLOCK_TEST_REDIS_DSN"},
		{"etcd", "SCHEDLOCK_TEST_ETCD_DSN"},
		{"zookeeper", "SCHEDLOCK_TEST_ZK_DSN"},
	} {
		t.Run(store.name, func(t *testing.T) {
			dsn := os.Getenv(store.env)
			if dsn == "" {
				t.Skip(store.env + " is not set")
			}
			table := checks.NewPrefix()
			flags := []string{"--dsn", dsn, "--table", table}
			t.Cleanup(func() { runCmd(t, false, nil, append([]string{"unlock", "kept", "--force", "--yes"}, flags...)...) })
			r := runCmd(t, false, nil, append(append([]string{"run", "--name", "kept", "--owner", "ops-a", "--at-most", "1m", "--at-least", "50s", "--create-table"}, flags...), "--", "true")...)
			if r.err != nil {
				t.Fatalf("run: %v\n%s", r.err, r.stderr)
			}
			if got := memoryLocks(t, append([]string{"--name", "kept"}, flags...)...); len(got) != 1 || got[0].State != "held" || got[0].Owner != "ops-a" {
				t.Fatalf("locks ls during the at-least: %+v", got)
			}
			r = runCmd(t, false, nil, append([]string{"unlock", "kept", "--owner", "ops-b", "--yes"}, flags...)...)
			if code := unlockExitCode(r.err); code != CodeNegative {
				t.Fatalf("unlock --owner ops-b: exit %d (%v), want %d", code, r.err, CodeNegative)
			}
			for _, extra := range [][]string{{"--dry-run"}, {"--yes"}} {
				r = runCmd(t, false, nil, append(append([]string{"unlock", "kept", "--owner", "ops-a"}, extra...), flags...)...)
				if r.err != nil {
					t.Fatalf("unlock --owner ops-a %v: %v\n%s", extra, r.err, r.stderr)
				}
			}
			if got := memoryLocks(t, append([]string{"--name", "kept", "--state", "held"}, flags...)...); len(got) != 0 {
				t.Fatalf("locks ls after unlock: %+v", got)
			}
			r = runCmd(t, false, nil, append(append([]string{"run", "--name", "kept", "--owner", "ops-c", "--skipped-exit-code", "99"}, flags...), "--", "true")...)
			if r.err != nil {
				t.Fatalf("run after unlock: %v\n%s", r.err, r.stderr)
			}
		})
	}
}
