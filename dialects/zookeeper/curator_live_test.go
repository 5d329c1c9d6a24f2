package zookeeper_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/zookeeper"
)

// curatorPeer plays a Curator InterProcessMutex on one path with a raw
// client, step by step as LockInternals does: create a protected
// ephemeral sequential node "_c_<uuid>-lock-", sort the children by the
// text after "lock-", hold when first, else watch the one before.
type curatorPeer struct {
	t    *testing.T
	conn *zk.Conn
	dir  string
	node string // our node's name
}

func newCuratorPeer(t *testing.T, dsn, dir string) *curatorPeer {
	t.Helper()
	cfg, err := zookeeper.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	conn, _, err := zk.Connect(cfg.Servers, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(quiet{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	return &curatorPeer{t: t, conn: conn, dir: dir}
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

// create makes the peer's lock node, with the client's address as data
// (Curator's default).
func (c *curatorPeer) create() {
	c.t.Helper()
	p, err := c.conn.Create(c.dir+"/_c_0c5b7a53-2a8e-4f4e-9a34-5d3c1f8e0b6a-lock-", []byte("10.1.2.3"), zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		c.t.Fatalf("curator peer: create under %s: %v", c.dir, err)
	}
	c.node = p[strings.LastIndexByte(p, '/')+1:]
}

// predecessor is the node the peer waits on, "" when it holds the lock.
func (c *curatorPeer) predecessor() string {
	c.t.Helper()
	children, _, err := c.conn.Children(c.dir)
	if err != nil {
		c.t.Fatal(err)
	}
	suffix := func(s string) string {
		if i := strings.LastIndex(s, "lock-"); i >= 0 {
			return s[i+len("lock-"):]
		}
		return s
	}
	sort.Slice(children, func(i, j int) bool { return suffix(children[i]) < suffix(children[j]) })
	for i, ch := range children {
		if ch == c.node {
			if i == 0 {
				return ""
			}
			return children[i-1]
		}
	}
	c.t.Fatalf("curator peer: our node %s is gone", c.node)
	return ""
}

func (c *curatorPeer) release() {
	if err := c.conn.Delete(c.dir+"/"+c.node, -1); err != nil {
		c.t.Fatal(err)
	}
}

// A Curator InterProcessMutex and schedlock on the same path exclude each
// other both ways; locks ls shows the Curator holder; a Curator waiter
// gets the lock when schedlock releases; and, as documented, a Curator
// peer does not honour schedlock's at-least while schedlock contenders
// do.
func TestCuratorInterop(t *testing.T) {
	dsn := liveDSN(t)
	b := openLive(t, dsn)
	l := newTable(t, b)
	ctx := t.Context()
	name := "jobs/nightly report"
	dir := l.NamePath(name)
	if !strings.HasSuffix(dir, "/jobs%2Fnightly report") {
		t.Fatalf("name path %s", dir)
	}
	if _, err := b.ReadConn().Create(dir, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	peer := newCuratorPeer(t, dsn, dir)

	// Curator holds: schedlock is refused and names the holder.
	peer.create()
	if p := peer.predecessor(); p != "" {
		t.Fatalf("curator peer alone waits on %s", p)
	}
	_, err := l.Acquire(ctx, name, dialects.Options{Owner: "sl-1"})
	var held *dialects.HeldError
	if !errors.As(err, &held) || held.Holder != "10.1.2.3" {
		t.Fatalf("acquire while Curator holds: %v; want held by 10.1.2.3", err)
	}
	if children, _, err := peer.conn.Children(dir); err != nil || len(children) != 1 {
		t.Fatalf("children after a refused try: %v, %v; want only the Curator holder's node", children, err)
	}
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = l.Acquire(cctx, name, dialects.Options{Owner: "sl-1", Wait: time.Minute})
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("acquire cancelled while waiting: %v", err)
	}
	if children, _, err := peer.conn.Children(dir); err != nil || len(children) != 1 {
		t.Fatalf("children after a cancelled wait: %v, %v; want only the Curator holder's node", children, err)
	}
	listing, err := b.ListLocks(ctx, dialects.ListOptions{Tables: []dialects.Table{{Name: l.Schema().Table}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(listing.Locks) != 1 || listing.Locks[0].Name != name || listing.Locks[0].State != dialects.StateHeld ||
		listing.Locks[0].Owner != "10.1.2.3" || listing.Locks[0].Holder == nil {
		t.Fatalf("listing while Curator holds: %+v", listing.Locks)
	}
	peer.release()

	// schedlock holds: a Curator waiter queues behind it and gets the lock
	// once schedlock releases.
	lease, err := l.Acquire(ctx, name, dialects.Options{Owner: "sl-1"})
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := lease.Token()
	peer.create()
	pred := peer.predecessor()
	if !strings.HasSuffix(pred, fmt.Sprintf("-lock-%010d", tok)) {
		t.Fatalf("curator waiter watches %q; want schedlock's node of token %d", pred, tok)
	}
	_, _, watch, err := peer.conn.GetW(dir + "/" + pred)
	if err != nil {
		t.Fatal(err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-watch:
		if ev.Type != zk.EventNodeDeleted {
			t.Fatalf("watch event %v", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the Curator waiter was not told of the release")
	}
	if p := peer.predecessor(); p != "" {
		t.Fatalf("after schedlock's release the Curator waiter still waits on %s", p)
	}
	peer.release()

	// At-least: schedlock contenders are refused until it ends; a Curator
	// peer, which does not know the at-least node, gets the lock at once.
	lease, err = l.Acquire(ctx, name, dialects.Options{Owner: "sl-1", AtMost: time.Minute, AtLeast: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire(ctx, name, dialects.Options{Owner: "sl-2"}); !errors.Is(err, dialects.ErrHeld) {
		t.Fatalf("schedlock acquire within at-least: %v; want ErrHeld", err)
	}
	peer.create()
	if p := peer.predecessor(); p != "" {
		t.Fatalf("curator peer after an at-least release waits on %s", p)
	}
	peer.release()
	if ok, err := l.Expire(ctx, name); err != nil || !ok {
		t.Fatalf("force release of the at-least: %v, %v", ok, err)
	}
	lease, err = l.Acquire(ctx, name, dialects.Options{Owner: "sl-2"})
	if err != nil {
		t.Fatalf("acquire after the at-least was force-released: %v", err)
	}
	_ = lease.Release(ctx)
}

// The ACL of the chroot refusing this session (no credentials, or the
// wrong ones) is one line naming the node and what to do, with no
// password in it, and nothing is created.
func TestAuthRefused(t *testing.T) {
	dsn := liveDSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	// The test's chroot itself stays open to every test: only the node
	// below it gets the owner's ACL.
	open := openLive(t, dsn)
	chroot := strings.TrimRight(u.Path, "/")
	switch _, err := open.ReadConn().Create(chroot, nil, 0, zk.WorldACL(zk.PermAll)); {
	case err == nil:
		t.Cleanup(func() { _ = open.ReadConn().Delete(chroot, -1) }) // when empty: after the drop below
	case !errors.Is(err, zk.ErrNodeExists):
		t.Fatal(err)
	}
	owner := *u
	owner.User = url.UserPassword("owner", "owner-Pw-1")
	owner.Path = strings.TrimRight(u.Path, "/") + "/acl-" + dialects.NewOwner()[:8]
	ob := openLive(t, owner.String())
	l := newTable(t, ob) // creates the chroot and table with the owner's ACL
	lease, err := l.Acquire(t.Context(), "job", dialects.Options{Owner: "a"})
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release(context.Background())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = l.DropTable(ctx)
	})

	for _, who := range []*url.Userinfo{nil, url.UserPassword("owner", "wrong-Pw-2")} {
		v := owner
		v.User = who
		ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
		b, err := zookeeper.Open(ctx, v.String())
		cancel()
		if err == nil {
			b.Close()
			t.Fatalf("open as %v: no error; want the ACL's refusal", who)
		}
		if !errors.Is(err, dialects.ErrPrivilege) || strings.Contains(err.Error(), "Pw") || strings.Contains(err.Error(), "\n") {
			t.Errorf("open as %v: %v; want one line matching ErrPrivilege without the password", who, err)
		}
	}
	children, _, err := ob.ReadConn().Children(l.Root())
	if err != nil || len(children) != 1 {
		t.Errorf("table node after the refusals: %v, %v; want only the lock", children, err)
	}
}
