//go:build unix

package cmd

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/kubernetes"
	"github.com/schedlock/schedlock/internal/livetest"
	"github.com/schedlock/schedlock/internal/tcpproxy"
)

// kubeLive is the live Kubernetes DSN and the kubeconfig it names.
func kubeLive(t *testing.T) (dsn, kubeconfig string) {
	t.Helper()
	dsn = livetest.DSN(t, livetest.Kubernetes)
	u, err := url.Parse(dsn)
	if err != nil || u.Query().Get("kubeconfig") == "" {
		t.Fatalf("%s names no kubeconfig file (?kubeconfig=)", livetest.Kubernetes)
	}
	return dsn, u.Query().Get("kubeconfig")
}

// kubeconfigWith writes a copy of kubeconfig whose cluster server is
// server (when not empty) and whose token is token (when not empty).
func kubeconfigWith(t *testing.T, kubeconfig, server, token string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfg.Clusters {
		if server != "" {
			c.Server = server
		}
	}
	for _, a := range cfg.AuthInfos {
		if token != "" {
			a.Token = token
		}
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// kubeLeases is a client-go typed Lease client of the kubeconfig's server.
func kubeLeases(t *testing.T, kubeconfig, ns string) coordinationv1client.LeaseInterface {
	t.Helper()
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cli, err := coordinationv1client.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return cli.Leases(ns)
}

// TestKubernetesRunConnectionCutStopsChildFirst cuts the connection of
// `run` to the API server (an in-test proxy): the Lease cannot be renewed,
// so run stops its command at its lease's end on its own clock, before a
// contender connected directly sees the Lease unchanged for its duration
// and takes it, with a larger token.
func TestKubernetesRunConnectionCutStopsChildFirst(t *testing.T) {
	dsn, kubeconfig := kubeLive(t)
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	var target string
	for _, c := range cfg.Clusters {
		u, err := url.Parse(c.Server)
		if err != nil {
			t.Fatal(err)
		}
		target = u.Host
	}
	p, err := tcpproxy.Start(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	t.Cleanup(p.Restore)
	via := "k8s://default?kubeconfig=" + kubeconfigWith(t, kubeconfig, "https://"+p.Addr(), "")
	name := "fault-cut-" + strings.ToLower(strconv.FormatInt(time.Now().UnixNano(), 36))
	started, stopped, done := faultRun(t, via, name)
	contender, err := kubernetes.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer contender.Close()

	p.Cut()
	cutAt := time.Now()
	l, err := contender.Locker(dialects.StrategyTable, dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	lease, err := l.Acquire(ctx, name, dialects.Options{AtMost: time.Minute, Wait: 50 * time.Second, RetryEvery: 50 * time.Millisecond, Owner: "contender"})
	if err != nil {
		t.Fatalf("the contender never got the lock: %v", err)
	}
	gotAt := time.Now()
	token, _ := lease.Token()
	_ = lease.Release(ctx)
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

// TestKubernetesBadInput: an unreachable server, refused credentials, a
// namespace the account may not use and names or DSNs Kubernetes cannot
// take are each one line with the documented exit code, the token never
// shown, and no Lease written.
func TestKubernetesBadInput(t *testing.T) {
	dsn, kubeconfig := kubeLive(t)
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	var tokens []string
	for _, a := range cfg.AuthInfos {
		tokens = append(tokens, a.Token)
	}
	leases := kubeLeases(t, kubeconfig, "default")
	before, err := leases.List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	name := "bad-input-" + strings.ToLower(strconv.FormatInt(time.Now().UnixNano(), 36))
	for _, c := range []struct {
		what, dsn, name string
		code            int
		says            string
	}{
		{"unreachable", "k8s://default?kubeconfig=" + kubeconfigWith(t, kubeconfig, "https://127.0.0.1:1", "") + "&timeout=2s", name, CodeError, "connection refused"},
		{"wrong credentials", "k8s://default?kubeconfig=" + kubeconfigWith(t, kubeconfig, "", "not-the-token"), name, CodeError, "401 Unauthorized"},
		{"forbidden namespace", "k8s://forbidden?kubeconfig=" + kubeconfig, name, CodeError, "leases.coordination.k8s.io in namespace forbidden"},
		{"bad namespace", "k8s://Bad_Namespace?kubeconfig=" + kubeconfig, name, CodeUsage, "not a Kubernetes namespace name"},
		{"every namespace", "k8s://*?kubeconfig=" + kubeconfig, name, CodeUsage, "names every namespace, for locks ls only"},
		{"unknown option", dsn + "&lease=1", name, CodeUsage, "unknown Kubernetes DSN option"},
		{"missing kubeconfig", "k8s://default?kubeconfig=/nonexistent/kubeconfig", name, CodeError, "no client configuration"},
		{"NUL in the name", dsn, "job\x00x", CodeUsage, "NUL"},
		{"blank name", dsn, "   ", CodeUsage, "white space"},
	} {
		t.Run(c.what, func(t *testing.T) {
			r := runCmd(t, false, nil, "run", "--dsn", c.dsn, "--name", c.name, "--", "true")
			msg := strings.TrimSpace(r.stderr)
			switch {
			case r.err == nil:
				t.Fatalf("run succeeded")
			case ExitCode(r.err) != c.code:
				t.Errorf("exit %d, want %d: %v", ExitCode(r.err), c.code, r.err)
			case !strings.Contains(r.err.Error(), c.says):
				t.Errorf("the error does not say %q: %v", c.says, r.err)
			case strings.Contains(strings.TrimSpace(r.err.Error()), "\n"):
				t.Errorf("not one line: %q", r.err)
			case slices.ContainsFunc(tokens, func(tok string) bool { return tok != "" && strings.Contains(msg+r.err.Error(), tok) }):
				t.Errorf("a token shows: %s", msg)
			}
			t.Log(r.err)
		})
	}
	after, err := leases.List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range after.Items {
		if strings.HasPrefix(l.Name, "bad-input-") || strings.HasPrefix(l.Name, "x-job") {
			t.Errorf("a refused run wrote Lease %s", l.Name)
		}
	}
	if len(after.Items) < len(before.Items) {
		t.Errorf("%d Leases before, %d after", len(before.Items), len(after.Items))
	}
}

// TestKubernetesCommands: on a Lease a controller's leader election holds
// (written as client-go's LeaseLock writes it), `locks ls` lists it with
// its holder, `run` skips its command (exit 0, naming the holder), a
// guarded `unlock` with another
// owner is refused (exit 3) and changes nothing; schedlock's own lock
// runs, is listed while held, and is freed by a guarded unlock; bench
// reports the engine beside the raw cycle.
func TestKubernetesCommands(t *testing.T) {
	dsn, kubeconfig := kubeLive(t)
	leases := kubeLeases(t, kubeconfig, "default")
	name := "kube-controller-manager-" + strings.ToLower(strconv.FormatInt(time.Now().UnixNano(), 36))
	holder, secs, trans := "node-a_5f0c1d", int32(15), int32(3)
	now := metav1.NewMicroTime(time.Now())
	if _, err := leases.Create(t.Context(), &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, AcquireTime: &now, RenewTime: &now, LeaseTransitions: &trans}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := runCmd(t, false, nil, "locks", "ls", "--dsn", dsn, "--name", name)
	if r.err != nil || !strings.Contains(r.stdout, name) || !strings.Contains(r.stdout, holder) {
		t.Fatalf("locks ls does not list the leader election %s held by %s: %v\n%s%s", name, holder, r.err, r.stdout, r.stderr)
	}
	if r := runCmd(t, false, nil, "run", "--dsn", dsn, "--name", name, "--", "sh", "-c", "exit 7"); ExitCode(r.err) != CodeOK || !strings.Contains(r.stderr+errString(r.err), holder) {
		t.Errorf("run on the held leader election: exit %d (%v, %s), want it skipped naming %s", ExitCode(r.err), r.err, r.stderr, holder)
	}
	if r := runCmd(t, false, nil, "unlock", name, "--dsn", dsn, "--owner", "someone-else", "--yes"); ExitCode(r.err) != CodeNegative {
		t.Errorf("unlock with another owner: exit %d (%v), want %d", ExitCode(r.err), r.err, CodeNegative)
	}
	got, err := leases.Get(t.Context(), name, metav1.GetOptions{})
	if err != nil || got.Spec.HolderIdentity == nil || *got.Spec.HolderIdentity != holder {
		t.Fatalf("the refused unlock changed the Lease: %v %+v", err, got.Spec)
	}

	mine := "Nightly_Report/" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if r := runCmd(t, false, nil, "run", "--dsn", dsn, "--name", mine, "--", "true"); r.err != nil {
		t.Fatalf("run: %v\n%s", r.err, r.stderr)
	}
	b, err := kubernetes.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	l, _ := b.LeaseLocker(dialects.Table{})
	s, err := l.Acquire(t.Context(), mine, dialects.Options{Owner: "holder-1", AtMost: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	r = runCmd(t, false, nil, "locks", "ls", "--dsn", dsn, "--name", mine)
	if r.err != nil || !strings.Contains(r.stdout, mine) || !strings.Contains(r.stdout, "holder-1") {
		t.Fatalf("locks ls does not list %s held by holder-1: %v\n%s%s", mine, r.err, r.stdout, r.stderr)
	}
	if r := runCmd(t, false, nil, "unlock", mine, "--dsn", dsn, "--owner", "holder-1", "--yes"); r.err != nil {
		t.Fatalf("guarded unlock by the owner: %v\n%s", r.err, r.stderr)
	}
	if err := s.Refresh(t.Context()); !errors.Is(err, dialects.ErrLeaseLost) {
		t.Errorf("refresh after the owner's unlock: %v, want ErrLeaseLost", err)
	}

	// bench reports the engine beside the raw client-go cycle.
	r = runCmd(t, false, nil, "bench", "--dsn", dsn, "--cycles", "20")
	if r.err != nil || !strings.Contains(r.stdout, "raw statements") || !strings.Contains(r.stdout, "engine") || !strings.Contains(r.stdout, "GET /version") {
		t.Errorf("bench: %v\n%s%s", r.err, r.stdout, r.stderr)
	}
}

// errString is err's message, "" for nil.
func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestKubernetesPause: a paused lock skips `run` on it (exit 0, naming the
// pause) until `resume` frees it.
func TestKubernetesPause(t *testing.T) {
	dsn, _ := kubeLive(t)
	name := "paused-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if r := runCmd(t, false, nil, "pause", name, "--dsn", dsn, "--for", "1h", "--create", "--by", "ops", "--yes"); r.err != nil {
		t.Fatalf("pause: %v\n%s", r.err, r.stderr)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	r := runCmd(t, false, nil, "run", "--dsn", dsn, "--name", name, "--", "touch", marker)
	if ExitCode(r.err) != CodeOK || !strings.Contains(r.stderr+errString(r.err), "paused by ops") {
		t.Errorf("run on the paused lock: exit %d, %v, %s; want it skipped as paused", ExitCode(r.err), r.err, r.stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the command ran while the lock was paused")
	}
	if r := runCmd(t, false, nil, "resume", name, "--dsn", dsn, "--yes"); r.err != nil {
		t.Fatalf("resume: %v\n%s", r.err, r.stderr)
	}
	if r := runCmd(t, false, nil, "run", "--dsn", dsn, "--name", name, "--", "touch", marker); r.err != nil {
		t.Fatalf("run after resume: %v\n%s", r.err, r.stderr)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatal("the command did not run after resume")
	}
}
