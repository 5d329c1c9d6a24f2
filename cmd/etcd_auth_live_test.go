//go:build unix

package cmd

import (
	"bufio"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// etcdctlOn runs etcdctl with each of steps on member m, failing t on an
// error.
func etcdctlOn(t *testing.T, e liveEtcd, m *etcdMember, steps ...[]string) {
	t.Helper()
	for _, args := range steps {
		c := exec.Command(e.etcdctl, append([]string{"--endpoints=http://" + m.client}, args...)...)
		c.Env = append(c.Environ(), "ETCDCTL_API=3")
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("etcdctl %v: %v\n%s", args, err, out)
		}
	}
}

// authenticateCalls is how many Authenticate requests member m has
// started, from its metrics.
func authenticateCalls(t *testing.T, m *etcdMember) int {
	t.Helper()
	resp, err := http.Get("http://" + m.client + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	const metric = `grpc_server_started_total{grpc_method="Authenticate",grpc_service="etcdserverpb.Auth",grpc_type="unary"} `
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), metric); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("metric %s%s: %v", metric, v, err)
			}
			return n
		}
	}
	t.Fatalf("the member's metrics have no %s(%v)", metric, sc.Err())
	return 0
}

// TestEtcdAuthSelfcheckLogsInOnce runs selfcheck on an etcd with
// authentication: every check passes, and the server is asked to
// authenticate a few times (the client's login, its lease keep-alive
// stream's), not once per lease keep-alive. Each Authenticate is a bcrypt
// password check: one per keep-alive kept the server's CPU so busy that
// the contention check's requests queued behind them for minutes.
func TestEtcdAuthSelfcheckLogsInOnce(t *testing.T) {
	e := etcdLive(t)
	m := startEtcdMember(t)
	etcdctlOn(t, e, m, []string{"user", "add", "root:Root-Pass-1"}, []string{"auth", "enable"})
	before := authenticateCalls(t, m)
	res := runCmd(t, false, nil, "selfcheck", "--dsn", "etcd://root:Root-Pass-1@"+m.client+"/jobs")
	if res.err != nil {
		t.Fatalf("selfcheck: %v\n%s\n%s", res.err, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stdout, " 0 failed") {
		t.Fatalf("selfcheck report: %s", res.stdout)
	}
	// The suite refreshes and recycles leases hundreds of times.
	n := authenticateCalls(t, m) - before
	t.Logf("selfcheck authenticated %d times", n)
	if n > 4 {
		t.Errorf("selfcheck authenticated %d times; want one login per client and per keep-alive stream", n)
	}
}

// TestEtcdAuthRefusedIsOneLine enables authentication on an etcd of the
// test's own: a wrong password is one line naming the fix, without the
// password, exit 1; the right one lists and runs.
func TestEtcdAuthRefusedIsOneLine(t *testing.T) {
	e := etcdLive(t)
	m := startEtcdMember(t)
	etcdctlOn(t, e, m, []string{"user", "add", "root:Right-Pass-1"}, []string{"auth", "enable"})
	res := runCmd(t, false, nil, "locks", "ls", "--dsn", "etcd://root:Wrong-Pass-2@"+m.client+"/jobs")
	msg := res.stderr + res.err.Error()
	switch {
	case res.err == nil:
		t.Fatal("locks ls with a wrong password succeeded")
	case strings.Contains(msg, "Wrong-Pass-2"):
		t.Errorf("the password shows: %s", msg)
	case !strings.Contains(res.err.Error(), "check the user name and password"):
		t.Errorf("the refusal does not say what to check: %s", res.err)
	case strings.Contains(strings.TrimSpace(res.err.Error()), "\n"):
		t.Errorf("not one line: %q", res.err)
	}
	t.Log(res.err)
	if res := runCmd(t, false, nil, "run", "--dsn", "etcd://root:Right-Pass-1@"+m.client+"/jobs", "--name", "auth", "--", "true"); res.err != nil {
		t.Fatalf("run with the right password: %v\n%s", res.err, res.stderr)
	}
}

// TestEtcdUserWithoutPermission: etcd users whose roles do not cover the
// lock space (no permission on it, or read only): run says which
// permission is missing and how to grant it (exit 1, nothing ran), and
// detect reports it as a missing privilege.
func TestEtcdUserWithoutPermission(t *testing.T) {
	e := etcdLive(t)
	m := startEtcdMember(t)
	for _, args := range [][]string{
		{"user", "add", "root:Root-Pass-1"},
		{"user", "add", "elsewhere:Pass-2"}, {"role", "add", "elsewhere"}, {"role", "grant-permission", "elsewhere", "--prefix=true", "readwrite", "other/"}, {"user", "grant-role", "elsewhere", "elsewhere"},
		{"user", "add", "reader:Pass-3"}, {"role", "add", "reader"}, {"role", "grant-permission", "reader", "--prefix=true", "read", "jobs/"}, {"user", "grant-role", "reader", "reader"},
		{"auth", "enable"},
	} {
		c := exec.Command(e.etcdctl, append([]string{"--endpoints=http://" + m.client}, args...)...)
		c.Env = append(c.Environ(), "ETCDCTL_API=3")
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("etcdctl %v: %v\n%s", args, err, out)
		}
	}
	const grant = "etcdctl role grant-permission ROLE --prefix=true readwrite jobs/"
	for _, user := range []string{"elsewhere:Pass-2", "reader:Pass-3"} {
		t.Run(strings.Split(user, ":")[0], func(t *testing.T) {
			dsn := "etcd://" + user + "@" + m.client + "/jobs"
			runRefused(t, dsn, "missing privilege", grant)
			missing := detectMissingPrivileges(t, dsn)
			if len(missing) != 1 || !strings.Contains(missing[0].Grant, grant) {
				t.Errorf("detect: missing privileges %+v, want one with %q", missing, grant)
			}
			if l := detectCapability(t, dsn, "lock_listing"); l.Status == "yes" || !strings.Contains(l.Remedy, grant) {
				t.Errorf("detect: lock_listing %+v, want it not proved, with %q", l, grant)
			}
		})
	}
}
