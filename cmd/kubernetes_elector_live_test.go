//go:build unix

package cmd

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects/kubernetes/kubetest"
)

// TestKubernetesRunAndLeaderElector: `schedlock run` and a client-go
// LeaderElector on one Lease exclude each other both ways. While the
// elector leads, run skips its command naming the elector; while run
// holds the Lease, a new elector reads it round after round and does not
// lead, and leads once run has released it.
func TestKubernetesRunAndLeaderElector(t *testing.T) {
	dsn, kubeconfig := kubeLive(t)
	name := "elector-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	dir := t.TempDir()

	first := kubetest.StartElector(t, kubeconfig, "default", name, "controller-1", true)
	waitFor(t, 60*time.Second, "the elector leads", first.Leading)
	marker := filepath.Join(dir, "ran")
	r := runCmd(t, false, nil, "run", "--dsn", dsn, "--name", name, "--", "touch", marker)
	if ExitCode(r.err) != CodeOK || !strings.Contains(r.stderr+errString(r.err), "controller-1") {
		t.Errorf("run while the elector leads: exit %d, %v; want it skipped naming controller-1", ExitCode(r.err), r.err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("run ran its command while the elector led")
	}
	first.Stop()

	started, release := filepath.Join(dir, "started"), filepath.Join(dir, "release")
	done := make(chan result, 1)
	go func() {
		done <- runCmd(t, false, nil, "run", "--dsn", dsn, "--name", name, "--at-most", "30s", "--",
			"sh", "-c", `touch "$1"; while [ ! -e "$2" ]; do sleep 0.05; done`, "sh", started, release)
	}()
	waitFor(t, 30*time.Second, "run starts its command", func() bool {
		select {
		case r := <-done:
			t.Fatalf("run ended before its command started: %v\n%s", r.err, r.stderr)
		default:
		}
		_, err := os.Stat(started)
		return err == nil
	})
	second := kubetest.StartElector(t, kubeconfig, "default", name, "controller-2", true)
	second.WaitRounds(t, 6)
	if second.Leading() {
		t.Fatal("the elector leads while schedlock run holds the Lease")
	}
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.err != nil {
		t.Fatalf("run: %v\n%s", r.err, r.stderr)
	}
	waitFor(t, 60*time.Second, "the elector leads after run released the Lease", second.Leading)
}
