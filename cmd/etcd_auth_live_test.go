//go:build unix

package cmd

import (
	"os/exec"
	"strings"
	"testing"
)

// TestEtcdAuthRefusedIsOneLine enables authentication on an etcd of the
// test's own: a wrong password is one line naming the fix, without the
// password, exit 1; the right one lists and runs.
func TestEtcdAuthRefusedIsOneLine(t *testing.T) {
	e := etcdLive(t)
	m := startEtcdMember(t)
	for _, args := range [][]string{{"user", "add", "root:Right-Pass-1"}, {"auth", "enable"}} {
		c := exec.Command(e.etcdctl, append([]string{"--endpoints=http://" + m.client}, args...)...)
		c.Env = append(c.Environ(), "ETCDCTL_API=3")
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("etcdctl %v: %v\n%s", args, err, out)
		}
	}
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
