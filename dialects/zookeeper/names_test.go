package zookeeper

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEncodeName(t *testing.T) {
	for _, c := range []struct{ name, node string }{
		{"nightly-report", "nightly-report"},
		{"a b  c", "a b  c"},
		{"jobs/nightly", "jobs%2Fnightly"},
		{"100%", "100%25"},
		{".", "%2E"},
		{"..", "%2E%2E"},
		{"...", "..."},
		{"a\tb", "a%09b"},
		{"a\u0085b", "a%C2%85b"},
		{"日本語 ключ", "日本語 ключ"},
		{"🔒", "%F0%9F%94%92"},
		{"\ue000", "%EE%80%80"},
		{"\ufff0", "%EF%BF%B0"},
		{"a'b\"c\\d;e_f", "a'b\"c\\d;e_f"},
		{"lock-0000000001", "lock-0000000001"},
	} {
		if got := EncodeName(c.name); got != c.node {
			t.Errorf("EncodeName(%q) = %q, want %q", c.name, got, c.node)
		}
		if back, ok := DecodeName(c.node); !ok || back != c.name {
			t.Errorf("DecodeName(%q) = %q, %v; want %q", c.node, back, ok, c.name)
		}
	}
	for _, node := range []string{"50%", "%zz", "%FF"} {
		if got, ok := DecodeName(node); ok || got != node {
			t.Errorf("DecodeName(%q) = %q, %v; want it kept, not ok", node, got, ok)
		}
	}
}

// validNodeName reports whether ZooKeeper accepts s as one path segment
// (org.apache.zookeeper.common.PathUtils.validatePath, per UTF-16 unit).
func validNodeName(s string) bool {
	if s == "" || s == "." || s == ".." || strings.Contains(s, "/") {
		return false
	}
	for _, r := range s {
		switch {
		case r == 0, r > 0 && r <= 0x1F, r >= 0x7F && r <= 0x9F, r >= 0xD800 && r <= 0xF8FF, r >= 0xFFF0:
			return false
		}
	}
	return true
}

// FuzzEncodeName: every name maps to one valid node name, and back.
func FuzzEncodeName(f *testing.F) {
	for _, s := range []string{"a", "jobs/nightly", "%", ".", "..", "🔒", "a\x00b", "\ufff0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if name == "" || !utf8.ValidString(name) || strings.ContainsRune(name, 0) {
			return
		}
		node := EncodeName(name)
		if !validNodeName(node) {
			t.Fatalf("EncodeName(%q) = %q, not a node name ZooKeeper accepts", name, node)
		}
		back, ok := DecodeName(node)
		if !ok || back != name {
			t.Fatalf("DecodeName(EncodeName(%q)) = %q, %v", name, back, ok)
		}
	})
}

func TestSortedLockNodes(t *testing.T) {
	children := []string{
		"at-least",
		"_c_5f0e3a7e-1b2c-4d5e-8f90-a1b2c3d4e5f6-lock-0000000012",
		"lock-0000000003",
		"_c_00000000-0000-4000-8000-000000000000-lock-0000000007",
		"unrelated",
	}
	got := sortedLockNodes(children)
	want := []int64{3, 7, 12}
	if len(got) != len(want) {
		t.Fatalf("got %v, want sequences %v", got, want)
	}
	for i, n := range got {
		if n.seq != want[i] {
			t.Errorf("node %d: %s, want sequence %d", i, n.name, want[i])
		}
	}
}

func TestParseDSN(t *testing.T) {
	c, err := ParseDSN("zk://app:s3cret@zk1:2181,zk2,10.0.0.3:2182/jobs/locks?session_timeout=6s")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Servers, " "); got != "zk1:2181 zk2:2181 10.0.0.3:2182" {
		t.Errorf("servers %q", got)
	}
	if c.Chroot != "/jobs/locks" || c.User != "app" || c.Password != "s3cret" || c.SessionTimeout.String() != "6s" {
		t.Errorf("parsed %+v", c)
	}
	if s := c.String(); strings.Contains(s, "s3cret") {
		t.Errorf("String() = %q shows the password", s)
	}
	if c, err := ParseDSN("zk://localhost"); err != nil || c.Chroot != "" || c.Servers[0] != "localhost:2181" || c.SessionTimeout != DefaultSessionTimeout {
		t.Errorf("zk://localhost: %+v, %v", c, err)
	}
	for _, bad := range []string{
		"zk://h/a//b",
		"zk://h/a/../b",
		"zk://h/a?session_timeout=soon",
		"zk://h/a?session_timeout=10ms",
		"zk://h/a?chroot=x",
		"zk://:pw@h/a",
		"zk://h/a%2Fb/%F0%9F%94%92",
	} {
		if _, err := ParseDSN(bad); err == nil {
			t.Errorf("ParseDSN(%q) accepted", bad)
		} else if strings.Contains(err.Error(), "pw") {
			t.Errorf("ParseDSN(%q): %v shows the password", bad, err)
		}
	}
}
