//go:build unix

package cmd

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/etcd"
	"github.com/schedlock/schedlock/internal/tcpproxy"
	"github.com/schedlock/schedlock/internal/testnet"
	"github.com/schedlock/schedlock/internal/testpki"
)

// childScript is the command of the fault tests' `run`: it writes its
// fencing token to $1, then loops until SIGTERM, when it writes the
// instant it was stopped (Unix nanoseconds) to $2.
const childScript = `trap 'date +%s%N > "$2"; exit 0' TERM; echo "$SCHEDLOCK_FENCING_TOKEN" > "$1"; while :; do sleep 0.05; done`

// faultRun starts `schedlock run` on dsn with a 3s at-most and the child
// script; it returns the files the child writes and the run's result.
func faultRun(t *testing.T, dsn, name string) (started, stopped string, done <-chan result) {
	t.Helper()
	dir := t.TempDir()
	started, stopped = filepath.Join(dir, "started"), filepath.Join(dir, "stopped")
	ch := make(chan result, 1)
	go func() {
		ch <- runCmd(t, false, nil, "run", "--dsn", dsn, "--name", name, "--at-most", "3s", "--kill-grace", "500ms", "--",
			"sh", "-c", childScript, "sh", started, stopped)
	}()
	waitFor(t, 15*time.Second, "run starts its command", func() bool {
		b, err := os.ReadFile(started)
		return err == nil && strings.TrimSpace(string(b)) != ""
	})
	return started, stopped, ch
}

// readNanos reads a Unix-nanosecond instant the child wrote.
func readNanos(t *testing.T, path string) time.Time {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the command was not stopped by SIGTERM (no %s): %v", filepath.Base(path), err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return time.Unix(0, n)
}

// contend acquires name on b, retrying until it gets the lock, and
// reports when it did and its token.
func contend(t *testing.T, b *etcd.Backend, name string, limit time.Duration) (time.Time, int64) {
	t.Helper()
	l, err := b.Locker(dialects.StrategyTable, dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit+5*time.Second)
	defer cancel()
	lease, err := l.Acquire(ctx, name, dialects.Options{AtMost: time.Minute, Wait: limit, RetryEvery: 20 * time.Millisecond, Owner: "contender"})
	if err != nil {
		t.Fatalf("the contender never got the lock: %v", err)
	}
	at := time.Now()
	tok, _ := lease.Token()
	_ = lease.Release(ctx)
	return at, tok
}

// expectLost waits for run to exit with the lease-lost code.
func expectLost(t *testing.T, done <-chan result) {
	t.Helper()
	select {
	case r := <-done:
		var exit *ExitError
		if !errors.As(r.err, &exit) || exit.Code != CodeLeaseLost {
			t.Fatalf("run after losing etcd: %v (stderr %q); want exit %d", r.err, r.stderr, CodeLeaseLost)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run did not end after it lost etcd")
	}
}

// TestEtcdRunConnectionCutStopsChildFirst cuts the connection of `run` to
// etcd (an in-test proxy): the lease cannot be refreshed, so run stops its
// command at the lease's end on its own clock, before the server ends the
// lease and a contender (connected directly) can take the lock.
func TestEtcdRunConnectionCutStopsChildFirst(t *testing.T) {
	e := etcdLive(t)
	p, err := tcpproxy.Start(e.endpoint)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	t.Cleanup(p.Restore)
	via := "etcd://" + p.Addr() + "/" + e.root
	name := "fault-cut-" + dialects.NewOwner()
	started, stopped, done := faultRun(t, via, name)
	contender, err := etcd.Open(context.Background(), e.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer contender.Close()

	p.Cut()
	cutAt := time.Now()
	gotAt, token := contend(t, contender, name, 20*time.Second)
	expectLost(t, done)
	stoppedAt := readNanos(t, stopped)
	if !stoppedAt.Before(gotAt) {
		t.Fatalf("the command was stopped at %s, after the contender got the lock at %s (cut at %s)", stoppedAt.Format(time.StampMilli), gotAt.Format(time.StampMilli), cutAt.Format(time.StampMilli))
	}
	held, _ := os.ReadFile(started)
	if old, _ := strconv.ParseInt(strings.TrimSpace(string(held)), 10, 64); token <= old {
		t.Errorf("the contender's token %d is not above the lost holder's %d", token, old)
	}
	t.Logf("cut at +0; command stopped at +%s; contender got the lock at +%s", stoppedAt.Sub(cutAt).Round(time.Millisecond), gotAt.Sub(cutAt).Round(time.Millisecond))
}

// TestEtcdRunMemberStoppedStopsChildFirst stops the only member of an etcd
// of the test's own while `run` holds a lock on it: run stops its command
// at its lease's end; after the member restarts, the lease (which a
// restarted member extends by its TTL) expires, and only then does a
// contender get the lock, with a higher token.
func TestEtcdRunMemberStoppedStopsChildFirst(t *testing.T) {
	etcdLive(t) // the test needs the etcd binaries the live suite has
	m := startEtcdMember(t)
	name := "fault-stop-" + dialects.NewOwner()
	started, stopped, done := faultRun(t, m.dsn(), name)

	m.stop(t)
	stoppedAt := time.Now()
	expectLost(t, done)
	childStopped := readNanos(t, stopped)
	m.start(t)
	contender, err := etcd.Open(context.Background(), m.dsn())
	if err != nil {
		t.Fatal(err)
	}
	defer contender.Close()
	gotAt, token := contend(t, contender, name, 30*time.Second)
	if !childStopped.Before(gotAt) {
		t.Fatalf("the command was stopped at %s, after the contender got the lock at %s", childStopped.Format(time.StampMilli), gotAt.Format(time.StampMilli))
	}
	held, _ := os.ReadFile(started)
	if old, _ := strconv.ParseInt(strings.TrimSpace(string(held)), 10, 64); token <= old {
		t.Errorf("the contender's token %d is not above the lost holder's %d", token, old)
	}
	t.Logf("member stopped at +0; command stopped at +%s; contender got the lock at +%s", childStopped.Sub(stoppedAt).Round(time.Millisecond), gotAt.Sub(stoppedAt).Round(time.Millisecond))
}

// etcdMember is an etcd member the test starts, stops and restarts on
// the same free loopback ports and data directory: alone (name "fault"),
// or one of a cluster of the test's own (startEtcdCluster).
type etcdMember struct {
	dir          string
	name         string
	client, peer string
	cluster      string // --initial-cluster: every member's name=peer URL
	// pki, when set, makes the client URL https, asking clients for a
	// certificate of its CA.
	pki *testpki.Files
	cmd *exec.Cmd
}

// dsn is the member's DSN; over TLS with the CA and client certificate.
func (m *etcdMember) dsn() string {
	if m.pki == nil {
		return "etcd://" + m.client + "/fault"
	}
	return "etcds://" + m.client + "/fault?cacert=" + url.QueryEscape(m.pki.CA) +
		"&cert=" + url.QueryEscape(m.pki.ClientCert) + "&key=" + url.QueryEscape(m.pki.ClientKey)
}

func startEtcdMember(t *testing.T) *etcdMember {
	t.Helper()
	m := newEtcdMembers(t, 1)[0]
	m.start(t)
	return m
}

// newEtcdMembers returns n members of one cluster, not started, each
// killed at the end of the test.
func newEtcdMembers(t *testing.T, n int) []*etcdMember {
	t.Helper()
	if _, err := exec.LookPath("etcd"); err != nil {
		t.Fatalf("etcd is needed beside SCHEDLOCK_TEST_ETCD_DSN: %v", err)
	}
	members := make([]*etcdMember, n)
	var cluster []string
	for i := range members {
		m := &etcdMember{dir: t.TempDir(), name: "fault", client: testnet.FreeAddr(t), peer: testnet.FreeAddr(t)}
		if n > 1 {
			m.name = fmt.Sprintf("m%d", i+1)
		}
		cluster = append(cluster, m.name+"=http://"+m.peer)
		members[i] = m
		t.Cleanup(func() {
			if m.cmd != nil {
				_ = m.cmd.Process.Kill()
				_ = m.cmd.Wait()
			}
		})
	}
	for _, m := range members {
		m.cluster = strings.Join(cluster, ",")
	}
	return members
}

// start runs the member and waits until it answers.
func (m *etcdMember) start(t *testing.T) {
	t.Helper()
	m.launch(t)
	m.waitReady(t)
}

// launch runs the member without waiting (a cluster's first member
// answers only once a quorum has started).
func (m *etcdMember) launch(t *testing.T) {
	t.Helper()
	state := "new"
	if _, err := os.Stat(filepath.Join(m.dir, "data")); err == nil {
		state = "existing"
	}
	scheme, tlsArgs := "http://", []string(nil)
	if m.pki != nil {
		scheme = "https://"
		tlsArgs = []string{"--cert-file", m.pki.ServerCert, "--key-file", m.pki.ServerKey,
			"--trusted-ca-file", m.pki.CA, "--client-cert-auth"}
	}
	c := exec.Command("etcd", append([]string{"--name", m.name, "--data-dir", filepath.Join(m.dir, "data"),
		"--listen-client-urls", scheme + m.client, "--advertise-client-urls", scheme + m.client,
		"--listen-peer-urls", "http://" + m.peer, "--initial-advertise-peer-urls", "http://" + m.peer,
		"--initial-cluster", m.cluster, "--initial-cluster-state", state,
		"--heartbeat-interval", "20", "--election-timeout", "200"}, tlsArgs...)...) // a quick election after a restart
	log, err := os.OpenFile(filepath.Join(m.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	c.Stdout, c.Stderr = log, log
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	m.cmd = c
}

// waitReady waits until the member answers, for up to 20 seconds.
func (m *etcdMember) waitReady(t *testing.T) {
	t.Helper()
	if err := m.answers(20 * time.Second); err != nil {
		t.Fatal(err)
	}
}

// errPortClash: a port the test picked was taken by another process
// before the member could bind it.
var errPortClash = errors.New("address already in use")

// answers waits until the member answers, for up to wait; it gives up at
// once with errPortClash when the member's log says a port was taken.
func (m *etcdMember) answers(wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		b, err := etcd.Open(ctx, m.dsn())
		cancel()
		if err == nil {
			_ = b.Close()
			return nil
		}
		out, _ := os.ReadFile(filepath.Join(m.dir, "server.log"))
		if strings.Contains(string(out), "address already in use") {
			return fmt.Errorf("the test's etcd at %s: %w\n%s", m.client, errPortClash, tail(string(out), 2000))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the test's etcd did not answer at %s: %v\n%s", m.client, err, tail(string(out), 2000))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startEtcdCluster starts n members of a cluster of the test's own and
// waits until each answers; a port taken by another process between
// its choice and the bind starts the cluster again on new ports, up to
// three times.
func startEtcdCluster(t *testing.T, n int) []*etcdMember {
	t.Helper()
	for try := 1; ; try++ {
		members := newEtcdMembers(t, n)
		for _, m := range members {
			m.launch(t)
		}
		var err error
		for _, m := range members {
			if err = m.answers(20 * time.Second); err != nil {
				break
			}
		}
		if err == nil {
			return members
		}
		if !errors.Is(err, errPortClash) || try == 3 {
			t.Fatal(err)
		}
		for _, m := range members { // a member that clashed has exited already
			if m.cmd != nil {
				_ = m.cmd.Process.Kill()
				_ = m.cmd.Wait()
				m.cmd = nil
			}
		}
	}
}

// stop kills the member at once, as a crash would.
func (m *etcdMember) stop(t *testing.T) {
	t.Helper()
	if err := m.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = m.cmd.Wait()
	m.cmd = nil
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return fmt.Sprintf("…%s", s[len(s)-n:])
}
