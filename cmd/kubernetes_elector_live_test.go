//go:build unix

package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// readCounter counts a LeaderElector's Lease reads (one per round).
type readCounter struct {
	coordinationv1client.LeasesGetter
	n *atomic.Int64
}

func (c readCounter) Leases(ns string) coordinationv1client.LeaseInterface {
	return readCounting{c.LeasesGetter.Leases(ns), c.n}
}

type readCounting struct {
	coordinationv1client.LeaseInterface
	n *atomic.Int64
}

func (c readCounting) Get(ctx context.Context, name string, opts metav1.GetOptions) (*coordinationv1.Lease, error) {
	c.n.Add(1)
	return c.LeaseInterface.Get(ctx, name, opts)
}

// runElector runs a client-go LeaderElector (identity id) on Lease
// default/name until the returned stop is called (it releases the Lease).
func runElector(t *testing.T, kubeconfig, name, id string) (leading *atomic.Bool, reads *atomic.Int64, stop func()) {
	t.Helper()
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cli, err := coordinationv1client.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	leading, reads = &atomic.Bool{}, &atomic.Int64{}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{LeaseMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Client: readCounter{cli, reads}, LockConfig: resourcelock.ResourceLockConfig{Identity: id}},
		LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 250 * time.Millisecond,
		ReleaseOnCancel: true, Name: name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { leading.Store(true) },
			OnStoppedLeading: func() { leading.Store(false) },
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); le.Run(ctx) }()
	stop = func() { cancel(); <-done }
	t.Cleanup(stop)
	return leading, reads, stop
}

// TestKubernetesRunAndLeaderElector: `schedlock run` and a client-go
// LeaderElector on one Lease exclude each other both ways. While the
// elector leads, run skips its command naming the elector; while run
// holds the Lease, a new elector reads it round after round and does not
// lead, and leads once run has released it.
func TestKubernetesRunAndLeaderElector(t *testing.T) {
	dsn, kubeconfig := kubeLive(t)
	name := "elector-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	dir := t.TempDir()

	leading, _, stop := runElector(t, kubeconfig, name, "controller-1")
	waitFor(t, 60*time.Second, "the elector leads", leading.Load)
	marker := filepath.Join(dir, "ran")
	r := runCmd(t, false, nil, "run", "--dsn", dsn, "--name", name, "--", "touch", marker)
	if ExitCode(r.err) != CodeOK || !strings.Contains(r.stderr+errString(r.err), "controller-1") {
		t.Errorf("run while the elector leads: exit %d, %v; want it skipped naming controller-1", ExitCode(r.err), r.err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("run ran its command while the elector led")
	}
	stop()

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
	leading2, reads, _ := runElector(t, kubeconfig, name, "controller-2")
	target := reads.Load() + 6
	waitFor(t, 60*time.Second, "the elector reads the Lease six times", func() bool { return reads.Load() >= target })
	if leading2.Load() {
		t.Fatal("the elector leads while schedlock run holds the Lease")
	}
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.err != nil {
		t.Fatalf("run: %v\n%s", r.err, r.stderr)
	}
	waitFor(t, 60*time.Second, "the elector leads after run released the Lease", leading2.Load)
}
