package zookeeper_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/zookeeper"
	"github.com/schedlock/schedlock/internal/dsn"
	"github.com/schedlock/schedlock/internal/tcpproxy"
	"github.com/schedlock/schedlock/internal/testnet"
)

// An ensemble that refuses every connection is one line through the DSN
// layer (what `schedlock … --dsn zk://…` prints): where, why, what to
// check, and no password; it comes after a few refused dials, not after
// a timeout.
func TestOpenUnreachable(t *testing.T) {
	raw := "zk://app:Secret-Pw-9@" + testnet.FreeAddr(t) + "," + testnet.FreeAddr(t) + "/jobs"
	d, err := dsn.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(d.Redacted(), "Secret") || !strings.Contains(d.Where, ",") {
		t.Errorf("redacted %q, where %q", d.Redacted(), d.Where)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	b, err := d.Connect(ctx)
	if err == nil {
		b.Close()
		t.Fatal("connected to closed ports")
	}
	msg := err.Error()
	if !strings.Contains(msg, "connection refused") || strings.Contains(msg, "Secret") || strings.Contains(msg, "\n") {
		t.Errorf("error %q: want one line saying the connection was refused, without the password", msg)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("gave up after %s", took)
	}
}

// A bad DSN is refused before anything is dialled: a bad session_timeout,
// a chroot that is no plain path (a NUL byte or another control
// character, bytes that are not UTF-8), one in ZooKeeper's own /zookeeper.
func TestOpenBadDSN(t *testing.T) {
	for _, raw := range []string{
		"zk://h/a?session_timeout=x", "zk://h/a?session_timeout=-1s", "zk://h/a?session_timeout=0", "zk://h/a?session_timeout=500ms",
		"zk://h/a/../b", "zk://:Pw@h/a",
		"zk://h/%00", "zk://h/a/%00b", "zk://h/a%0A", "zk://h/a%7F", "zk://h/%C2%85", "zk://h/%ff", "zk://h/%ff%fe",
		"zk://h/zookeeper", "zk://h/zookeeper/", "zk://h/zookeeper/jobs", "zk://h/zookeeper/quota",
	} {
		_, err := zookeeper.Open(context.Background(), raw)
		if !errors.Is(err, dialects.ErrInvalid) || strings.Contains(err.Error(), "Pw") || strings.Contains(err.Error(), "\n") {
			t.Errorf("Open(%q) = %v; want ErrInvalid without the password", raw, err)
		}
	}
}

// Paths that only look like the reserved one are chroots like any other.
func TestParseDSNNearReservedPath(t *testing.T) {
	for raw, want := range map[string]string{
		"zk://h/zookeeperx":     "/zookeeperx",
		"zk://h/jobs/zookeeper": "/jobs/zookeeper",
		"zk://h/ZooKeeper":      "/ZooKeeper",
		"zk://h/caf%C3%A9":      "/café",
	} {
		c, err := zookeeper.ParseDSN(raw)
		if err != nil || c.Chroot != want {
			t.Errorf("ParseDSN(%q): chroot %q, %v; want %q", raw, c.Chroot, err, want)
		}
	}
}

// A session the server expires while a lease is held (the proxy stalls
// longer than the session timeout): the lease ends at once when the
// client stops hearing from the server, the server deletes the lock
// node when the session expires, and once the network is back the same
// backend works again on a new session.
func TestSessionExpiry(t *testing.T) {
	raw := liveDSN(t)
	t.Parallel()
	cfg, err := zookeeper.ParseDSN(raw)
	if err != nil {
		t.Fatal(err)
	}
	p, err := tcpproxy.Start(cfg.Servers[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	t.Cleanup(p.Restore)
	cfg.Servers = []string{p.Addr()}
	cfg.SessionTimeout = 4 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	b, err := zookeeper.OpenConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	direct := openLive(t, raw)
	l := newTable(t, direct)
	tl, err := b.LeaseLocker(dialects.Table{Name: l.Schema().Table})
	if err != nil {
		t.Fatal(err)
	}
	lease, err := tl.Acquire(ctx, "expiring", dialects.Options{Owner: "holder"})
	if err != nil {
		t.Fatal(err)
	}
	oldSession := b.SessionID()
	p.Stall()
	select {
	case <-lease.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("the lease did not end after the connection stalled")
	}
	if !errors.Is(lease.Err(), dialects.ErrLeaseLost) {
		t.Fatalf("lease error %v; want ErrLeaseLost", lease.Err())
	}
	// The lock is free only once the server expired the session.
	other, err := l.Acquire(ctx, "expiring", dialects.Options{Owner: "other", Wait: 20 * time.Second, RetryEvery: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("acquire after the holder's session expired: %v", err)
	}
	if tok, _ := other.Token(); tok < 1 {
		t.Errorf("token after the takeover %d", tok)
	}
	_ = other.Release(ctx)
	p.Restore()
	again, err := tl.Acquire(ctx, "expiring", dialects.Options{Owner: "holder", Wait: 20 * time.Second})
	if err != nil {
		t.Fatalf("acquire on the recovered backend: %v", err)
	}
	if b.SessionID() == oldSession {
		t.Errorf("session %x was kept; want a new one after the expiry", oldSession)
	}
	if err := again.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := lease.Release(ctx); !errors.Is(err, dialects.ErrLeaseLost) {
		t.Errorf("release of the lost lease: %v; want ErrLeaseLost", err)
	}
}
