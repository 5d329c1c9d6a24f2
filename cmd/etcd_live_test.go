//go:build unix

package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/etcd"
	"github.com/schedlock/schedlock/internal/livetest"
)

// liveEtcd is the throwaway etcd of $SCHEDLOCK_TEST_ETCD_DSN: the DSN, its
// endpoint (host:port) and its lock-space prefix. The test is skipped
// when the variable is unset; with it set, etcdctl must be installed.
type liveEtcd struct {
	dsn, endpoint, root string
	etcdctl             string
}

func etcdLive(t *testing.T) liveEtcd {
	t.Helper()
	raw := livetest.DSN(t, livetest.Etcd)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("SCHEDLOCK_TEST_ETCD_DSN: %v", err)
	}
	ctl, err := exec.LookPath("etcdctl")
	if err != nil {
		t.Fatalf("etcdctl is needed beside SCHEDLOCK_TEST_ETCD_DSN: %v", err)
	}
	root := strings.TrimPrefix(u.Path, "/")
	if root != "" && !strings.HasSuffix(root, "/") {
		root += "/"
	}
	return liveEtcd{dsn: raw, endpoint: u.Host, root: root, etcdctl: ctl}
}

// startEtcdctlLock starts `etcdctl lock NAME [COMMAND...]` on e; it is
// killed when the test ends.
func startEtcdctlLock(t *testing.T, e liveEtcd, lockName string, command ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	out := &syncBuffer{}
	c := exec.Command(e.etcdctl, append([]string{"--endpoints=http://" + e.endpoint, "lock", lockName}, command...)...)
	c.Env = append(os.Environ(), "ETCDCTL_API=3")
	c.Stdout, c.Stderr = out, out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c.ProcessState == nil {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	})
	return c, out
}

// waitFor polls cond every 20ms until it holds, failing t after limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// etcdLocks is `locks ls -o json` of name on e.
func etcdLocks(t *testing.T, e liveEtcd, name string) []lockView {
	t.Helper()
	res := runCmd(t, false, nil, "locks", "ls", "--dsn", e.dsn, "--name", name, "-o", "json")
	if res.err != nil {
		t.Fatalf("locks ls: %v\n%s", res.err, res.stderr)
	}
	var locks []lockView
	if err := json.Unmarshal([]byte(res.stdout), &locks); err != nil {
		t.Fatalf("locks ls -o json: %v\n%s", err, res.stdout)
	}
	return locks
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// TestEtcdRunExcludesEtcdctlLock proves that `etcdctl lock PREFIX/NAME`
// and `schedlock run --name NAME` exclude each other both ways on the
// same etcd, and that locks ls shows etcdctl's holder.
func TestEtcdRunExcludesEtcdctlLock(t *testing.T) {
	e := etcdLive(t)
	name := "interop-" + dialects.NewOwner()
	shared := e.root + name // what etcdctl must be given

	// etcdctl holds: run is refused, locks ls names etcdctl's lease.
	ctl, out := startEtcdctlLock(t, e, shared)
	waitFor(t, 15*time.Second, "etcdctl lock prints its key", func() bool { return strings.Contains(out.String(), shared+"/") })
	res := runCmd(t, false, nil, "run", "--dsn", e.dsn, "--name", name, "--skipped-exit-code", "99", "--", "true")
	var exit *ExitError
	if !errors.As(res.err, &exit) || exit.Code != 99 {
		t.Fatalf("run while etcdctl holds %s: got %v (stderr %q), want the skipped exit code 99", shared, res.err, res.stderr)
	}
	if !strings.Contains(res.err.Error(), "etcd-lease:") {
		t.Errorf("run's refusal does not name etcdctl's lease: %q / %q / %v", res.stderr, res.stdout, res.err)
	}
	locks := etcdLocks(t, e, name)
	if len(locks) != 1 || locks[0].State != "held" || !strings.HasPrefix(deref(locks[0].Owner), "etcd-lease:") || !strings.HasPrefix(deref(locks[0].Key), shared+"/") {
		t.Fatalf("locks ls while etcdctl holds the lock: %+v, want one held entry owned by etcdctl's lease", locks)
	}
	_ = ctl.Process.Signal(syscall.SIGTERM) // etcdctl unlocks on SIGTERM
	_ = ctl.Wait()

	// run holds: etcdctl queues behind it and gets the lock only after.
	dir := t.TempDir()
	started, release := filepath.Join(dir, "started"), filepath.Join(dir, "release")
	runDone := make(chan result, 1)
	go func() {
		runDone <- runCmd(t, false, nil, "run", "--dsn", e.dsn, "--name", name, "--",
			"sh", "-c", `touch "$1"; while [ ! -e "$2" ]; do sleep 0.05; done`, "sh", started, release)
	}()
	waitFor(t, 15*time.Second, "run starts its command", func() bool { _, err := os.Stat(started); return err == nil })
	ctl, out = startEtcdctlLock(t, e, shared, "echo", "ETCDCTL-GOT-IT")
	waitFor(t, 15*time.Second, "locks ls shows etcdctl waiting", func() bool {
		for _, l := range etcdLocks(t, e, name) {
			if l.State == "waiting" && strings.HasPrefix(deref(l.Owner), "etcd-lease:") {
				return true
			}
		}
		return false
	})
	if strings.Contains(out.String(), "ETCDCTL-GOT-IT") {
		t.Fatal("etcdctl lock ran its command while schedlock run held the lock")
	}
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-runDone:
		if r.err != nil {
			t.Fatalf("run: %v\n%s", r.err, r.stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run did not end after its command did")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	waitDone := make(chan error, 1)
	go func() { waitDone <- ctl.Wait() }()
	select {
	case err := <-waitDone:
		if err != nil || !strings.Contains(out.String(), "ETCDCTL-GOT-IT") {
			t.Fatalf("etcdctl lock after run released: %v, output %q", err, out.String())
		}
	case <-ctx.Done():
		t.Fatalf("etcdctl lock did not get the lock after run released it; output %q", out.String())
	}
}

// TestEtcdSelfcheckPasses runs `schedlock selfcheck` on the live etcd, as
// a user would before going live: exit 0, no check failed.
func TestEtcdSelfcheckPasses(t *testing.T) {
	e := etcdLive(t)
	res := runCmd(t, false, nil, "selfcheck", "--dsn", e.dsn)
	if res.err != nil {
		t.Fatalf("selfcheck: %v\n%s\n%s", res.err, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stdout, " 0 failed") {
		t.Fatalf("selfcheck report: %s", res.stdout)
	}
}

// TestEtcdUnlockGuards frees etcd locks with unlock: refused without an
// owner while live, refused for another owner, released for the right
// owner (the key is gone), and etcdctl's holder freed with --force.
func TestEtcdUnlockGuards(t *testing.T) {
	e := etcdLive(t)
	be := openEtcd(t, e.dsn)
	l, err := be.Locker(dialects.StrategyTable, dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	name := "unlock-" + dialects.NewOwner()
	lease, err := l.Acquire(ctx, name, dialects.Options{AtMost: time.Minute, Owner: "host-a"})
	if err != nil {
		t.Fatal(err)
	}
	exitCode := func(r result) int {
		var exit *ExitError
		if errors.As(r.err, &exit) {
			return exit.Code
		}
		if r.err != nil {
			return 1
		}
		return 0
	}
	if r := runCmd(t, false, nil, "unlock", name, "--dsn", e.dsn, "--yes"); exitCode(r) != CodeNegative {
		t.Fatalf("unlock of a live lock without --owner: %v, want exit %d", r.err, CodeNegative)
	}
	if r := runCmd(t, false, nil, "unlock", name, "--dsn", e.dsn, "--owner", "host-b", "--yes"); exitCode(r) != CodeNegative {
		t.Fatalf("unlock --owner host-b of host-a's lock: %v, want exit %d", r.err, CodeNegative)
	}
	if r := runCmd(t, false, nil, "unlock", name, "--dsn", e.dsn, "--owner", "host-a", "--yes"); r.err != nil {
		t.Fatalf("unlock --owner host-a: %v\n%s", r.err, r.stderr)
	}
	if locks := etcdLocks(t, e, name); len(locks) != 0 {
		t.Fatalf("after unlock the lock is still listed: %+v", locks)
	}
	if err := lease.Refresh(ctx); !errors.Is(err, dialects.ErrLeaseLost) {
		t.Errorf("the holder's refresh after unlock: %v, want lease lost", err)
	}

	ctl, out := startEtcdctlLock(t, e, e.root+name)
	waitFor(t, 15*time.Second, "etcdctl lock prints its key", func() bool { return strings.Contains(out.String(), e.root+name+"/") })
	if r := runCmd(t, false, nil, "unlock", name, "--dsn", e.dsn, "--force", "--yes"); r.err != nil {
		t.Fatalf("unlock --force of etcdctl's lock: %v\n%s", r.err, r.stderr)
	}
	if locks := etcdLocks(t, e, name); len(locks) != 0 {
		t.Fatalf("after unlock --force the lock is still listed: %+v", locks)
	}
	_ = ctl.Process.Kill()
}

// openEtcd opens dsn with the etcd backend, closed when t ends.
func openEtcd(t *testing.T, dsn string) *etcd.Backend {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := etcd.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}
