package dsn

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/internal/testpki"
)

// TestEtcdDSNs parses the etcd forms: several endpoints, a prefix, TLS, a
// password that is redacted everywhere it could show.
func TestEtcdDSNs(t *testing.T) {
	ca := testpki.New(t).CA
	cases := []struct {
		raw, redacted, conn string
	}{
		{"etcd://127.0.0.1:2379/jobs", "etcd://127.0.0.1:2379/jobs", "etcd://127.0.0.1:2379/jobs"},
		{"etcd://ops:s3cr%40t@h1:2379,h2:2379,h3:2379/jobs?x-table=t", "etcd://ops:xxxxx@h1:2379,h2:2379,h3:2379/jobs?x-table=t", "etcd://ops:s3cr%40t@h1:2379,h2:2379,h3:2379/jobs"},
		{"etcds://ops:pw@h1/team/jobs?cacert=" + ca, "etcds://ops:xxxxx@h1/team/jobs?cacert=" + ca, "etcds://ops:pw@h1/team/jobs?cacert=" + url.QueryEscape(ca)},
		{"etcd://h1", "etcd://h1", "etcd://h1"},
	}
	for _, c := range cases {
		d, err := Parse(c.raw)
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.raw, err)
		}
		if d.Family != "etcd" {
			t.Errorf("%q: family %q, want etcd", c.raw, d.Family)
		}
		if d.Redacted() != c.redacted {
			t.Errorf("%q: redacted %q, want %q", c.raw, d.Redacted(), c.redacted)
		}
		if got := d.ConnString(); got != c.conn && !(strings.Contains(c.conn, "cacert") && strings.Contains(got, "cacert")) {
			t.Errorf("%q: conn %q, want %q", c.raw, got, c.conn)
		}
	}
}

// TestEtcdSeveralHostsNeedTheLastPort: the URL parser reads the port
// after the last colon, so the last of several hosts must name its port;
// the refusal says so in one line without the password.
func TestEtcdSeveralHostsNeedTheLastPort(t *testing.T) {
	_, err := Parse("etcd://ops:Very-Secret-9@h1:2379,h2/jobs")
	if err == nil || strings.Contains(err.Error(), "Very-Secret-9") || !strings.Contains(err.Error(), "port") {
		t.Fatalf("got %v; want a refusal about the port, without the password", err)
	}
}

// TestEtcdUnreachableIsOneLineWithoutThePassword dials a port nothing
// listens on: one line, the address, what to check, no password.
func TestEtcdUnreachableIsOneLineWithoutThePassword(t *testing.T) {
	d, err := Parse("etcd://ops:Very-Secret-9@127.0.0.1:1/jobs?dial-timeout=300ms")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := d.Connect(ctx)
	if err == nil {
		b.Close()
		t.Fatal("connected to a port nothing listens on")
	}
	var ce *ConnectError
	msg := err.Error()
	switch {
	case !errors.As(err, &ce):
		t.Errorf("got %T %v, want a *ConnectError", err, err)
	case strings.Contains(msg, "Very-Secret-9"):
		t.Errorf("the password shows: %s", msg)
	case strings.Contains(msg, "\n"):
		t.Errorf("not one line: %q", msg)
	case !strings.Contains(msg, "127.0.0.1:1") || !strings.Contains(msg, "etcd"):
		t.Errorf("the message does not name etcd at its address: %s", msg)
	}
	t.Log(msg)
}
