package etcd

import (
	"errors"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/schedlock/schedlock/dialects"
)

func TestKeyLayout(t *testing.T) {
	cases := []struct {
		root, table, name string
		lease             clientv3.LeaseID
		key               string
	}{
		{"jobs/", "", "nightly", 0x694d7c1e4a2b3c01, "jobs/nightly/694d7c1e4a2b3c01"},
		{"jobs/", DefaultTable, "a/b", 0x1f, "jobs/a%2Fb/1f"},
		{"", "", "50%/x", 0xabc, "50%25%2Fx/abc"},
		{"team/jobs/", "staging", "report", 0x10, "team/jobs/staging%/report/10"},
	}
	for _, c := range cases {
		sp := newSpace(c.root, c.table)
		if got := sp.lockKey(c.name, c.lease); got != c.key {
			t.Errorf("key of %q in %q/%q: %q, want %q", c.name, c.root, c.table, got, c.key)
		}
		p, ok := parseKey(c.root, c.key)
		wantTable := c.table
		if wantTable == "" {
			wantTable = DefaultTable
		}
		if !ok || p.name != c.name || p.table != wantTable || p.lease != c.lease {
			t.Errorf("parseKey(%q) = %+v, %v", c.key, p, ok)
		}
	}
	for _, bad := range []string{"jobs/x", "jobs/x/zz", "jobs/x/0", "jobs/a/b/c/1", "jobs/%zz/1", "other/x/1", "jobs/x/01", "jobs/staging/report/10", "jobs/%/report/10", "jobs/a%%/x/1"} {
		if p, ok := parseKey("jobs/", bad); ok {
			t.Errorf("parseKey(%q) = %+v, want not a lock key", bad, p)
		}
	}
}

// TestNamesNeverShareAPrefix: the prefix of one name is never a prefix of
// another name's keys, so no lock can hold up another.
func TestNamesNeverShareAPrefix(t *testing.T) {
	names := []string{"a", "a/b", "a%2Fb", "a%", "ab", "a/", "/a", "%", "%25"}
	sp := newSpace("jobs/", "")
	for _, x := range names {
		for _, y := range names {
			if x != y && strings.HasPrefix(sp.lockKey(y, 1), sp.lockPrefix(x)) {
				t.Errorf("a key of %q is under the prefix of %q", y, x)
			}
		}
	}
}

// TestTablesNeverShareAPrefixWithNames: no key of a table other than the
// default one is under the prefix of a lock of the default table, whatever
// the names (the table "staging" and the lock "staging" stay apart).
func TestTablesNeverShareAPrefixWithNames(t *testing.T) {
	names := []string{"staging", "staging%", "staging/x", "a", "%", "%25", "x%2F"}
	tables := []string{"staging", "a", "x", "25", "2F"}
	root := newSpace("jobs/", "")
	for _, table := range tables {
		sp := newSpace("jobs/", table)
		for _, x := range names {
			for _, y := range names {
				if key := sp.lockKey(y, 1); strings.HasPrefix(key, root.lockPrefix(x)) {
					t.Errorf("key %q of %q in table %q is under the prefix of the lock %q", key, y, table, x)
				}
			}
		}
	}
}

func FuzzEscapeName(f *testing.F) {
	for _, s := range []string{"a", "a/b", "%2F", "%%//", "名字/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		esc := EscapeName(name)
		if strings.Contains(esc, "/") {
			t.Fatalf("EscapeName(%q) = %q keeps a slash", name, esc)
		}
		back, ok := UnescapeName(esc)
		if !ok || back != name {
			t.Fatalf("UnescapeName(EscapeName(%q)) = %q, %v", name, back, ok)
		}
	})
}

func TestParseConfig(t *testing.T) {
	c, err := parseConfig("etcds://ops:p%40ss@h1:2380,[::1],h3/team/jobs?dial-timeout=2s&cacert=/ca.pem")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.endpoints, " "); got != "h1:2380 [::1]:2379 h3:2379" {
		t.Errorf("endpoints %q", got)
	}
	if !c.tls || c.user != "ops" || c.pass != "p@ss" || c.root != "team/jobs/" || c.dialTimeout != 2*time.Second || c.files.CA != "/ca.pem" {
		t.Errorf("config %+v", c)
	}
	if c, err := parseConfig("etcd://h"); err != nil || c.root != "" || c.tls {
		t.Errorf("etcd://h: %+v, %v", c, err)
	}
	if c, err := parseConfig("etcd://h//jobs"); err != nil || c.root != "/jobs/" {
		t.Errorf("etcd://h//jobs: %+v, %v; want the keys that start with /jobs/", c, err)
	}
	if c, err := parseConfig("etcd://h/caf%C3%A9"); err != nil || c.root != "café/" {
		t.Errorf("etcd://h/caf%%C3%%A9: %+v, %v; want the prefix café/", c, err)
	}
	// An empty segment anywhere else is a mistyped prefix, which would
	// put the locks in a space of their own (jobs// is not jobs/); a
	// prefix that is not UTF-8 or holds a control character would put a
	// NUL byte or stray bytes in every key.
	for _, bad := range []string{"etcd://h/?cacert=/x", "etcd://h/?bogus=1", "etcds://h/?cert=/c",
		"etcd://h/?dial-timeout=-1s", "etcd://h/?dial-timeout=0", "etcd://h/?dial-timeout=5", "etcd://h/?dial-timeout=soon",
		"etcd://h/jobs//", "etcd://h/a//b", "etcd://h///jobs",
		"etcd://h/%00", "etcd://h/jobs/%00", "etcd://h/%ff%fe", "etcd://h/jobs%ff", "etcd://h/a%0Ab", "etcd://h/a%7F", "etcd://h/%C2%85"} {
		_, err := parseConfig(bad)
		if !errors.Is(err, dialects.ErrInvalid) || strings.Contains(err.Error(), "\n") {
			t.Errorf("parseConfig(%q) = %v, want one line matching ErrInvalid", bad, err)
		}
	}
}

func TestValueRoundTrip(t *testing.T) {
	v := value{Owner: "host-a:1", LockedAt: time.Unix(1, 0).UTC(), Until: time.Unix(2, 0).UTC(), Released: true}
	got, ok := decodeValue([]byte(v.encode()))
	if !ok || got != v {
		t.Errorf("decode(encode(%+v)) = %+v, %v", v, got, ok)
	}
	for _, foreign := range []string{"", "x", `{"owner":""}`, "{"} {
		if _, ok := decodeValue([]byte(foreign)); ok {
			t.Errorf("%q decoded as a schedlock value", foreign)
		}
	}
}
