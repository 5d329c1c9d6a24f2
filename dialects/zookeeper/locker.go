package zookeeper

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/schedlock/schedlock/dialects"
)

// Locker is the table-strategy locker on one table node. It implements
// dialects.LeaseLocker, dialects.TableCreator and dialects.TableDropper.
type Locker struct {
	b      *Backend
	schema dialects.Schema
	root   string // the table node: <chroot>/<table>

	mu      sync.Mutex
	created []string // the nodes CreateTable created, outermost first
}

var (
	_ dialects.LeaseLocker  = (*Locker)(nil)
	_ dialects.TableCreator = (*Locker)(nil)
	_ dialects.TableDropper = (*Locker)(nil)
)

// LeaseLocker returns the locker on table t: its Name is the table node
// under the chroot (default "schedlock"); a table node that would be
// ReservedPath ("zookeeper" with no chroot) is refused with ErrInvalid. Only the schedlock preset
// exists on ZooKeeper: the layout is always Curator's.
func (b *Backend) LeaseLocker(t dialects.Table) (dialects.LeaseLocker, error) {
	schema, err := t.Schema()
	if err != nil {
		return nil, err
	}
	if schema.Preset != dialects.PresetSchedlock {
		return nil, wrap("table locker", fmt.Errorf("%w: preset %s: ZooKeeper locks have one layout, Curator's InterProcessMutex nodes (preset %s); the table name is the parent node of the locks",
			dialects.ErrUnsupported, schema.Preset, dialects.PresetSchedlock))
	}
	root := b.cfg.Chroot + "/" + schema.Table
	if reserved(root) {
		return nil, wrap("table locker", dialects.Invalidf("table node %s is in %s, which ZooKeeper keeps for itself: name another table, or give the DSN a chroot such as /jobs", root, ReservedPath))
	}
	return &Locker{b: b, schema: schema, root: root}, nil
}

// Strategy reports StrategyTable.
func (l *Locker) Strategy() dialects.Strategy { return dialects.StrategyTable }

// Schema implements dialects.TableLocker.
func (l *Locker) Schema() dialects.Schema { return l.schema }

// Root is the table node's path.
func (l *Locker) Root() string { return l.root }

// NamePath is the node of the lock called name: the parent of its lock
// nodes, the path a Curator InterProcessMutex takes to share the lock.
func (l *Locker) NamePath(name string) string { return l.root + "/" + EncodeName(name) }

// CreateTable creates the table node, and the chroot above it, where they
// do not exist. DropTable removes what this call created.
func (l *Locker) CreateTable(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	parts := strings.Split(strings.TrimPrefix(l.root, "/"), "/")
	p := ""
	for _, part := range parts {
		p += "/" + part
		_, err := call(ctx, func() (string, error) { return l.b.conn.Create(p, nil, 0, l.b.acl) })
		switch {
		case err == nil:
			l.created = append(l.created, p)
		case errors.Is(err, zk.ErrNodeExists):
		case errors.Is(err, zk.ErrNoAuth):
			return wrap("create table", l.b.noAuth(p[:lastSlash(p)]+"/", "create", err))
		default:
			return wrap("create table", fmt.Errorf("create %s: %w", p, err))
		}
	}
	return nil
}

// DropTable implements dialects.TableDropper: it deletes the table node
// with every lock under it (their holders are told at once: their nodes
// are gone), then the chroot nodes CreateTable created, when empty.
func (l *Locker) DropTable(ctx context.Context) error {
	if err := l.deleteTree(ctx, l.root); err != nil {
		return wrap("drop table", err)
	}
	l.mu.Lock()
	created := l.created
	l.created = nil
	l.mu.Unlock()
	for i := len(created) - 1; i >= 0; i-- {
		if created[i] == l.root {
			continue
		}
		_, err := call(ctx, func() (struct{}, error) { return struct{}{}, l.b.conn.Delete(created[i], -1) })
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			break // not empty, or not ours to delete any more
		}
	}
	return nil
}

// deleteTree deletes p and everything under it, children first.
func (l *Locker) deleteTree(ctx context.Context, p string) error {
	for attempt := 0; ; attempt++ {
		children, err := call(ctx, func() ([]string, error) { ch, _, err := l.b.conn.Children(p); return ch, err })
		if errors.Is(err, zk.ErrNoNode) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("list %s: %w", p, err)
		}
		for _, c := range children {
			if err := l.deleteTree(ctx, joinPath(p, c)); err != nil {
				return err
			}
		}
		_, err = call(ctx, func() (struct{}, error) { return struct{}{}, l.b.conn.Delete(p, -1) })
		switch {
		case err == nil, errors.Is(err, zk.ErrNoNode):
			return nil
		case errors.Is(err, zk.ErrNotEmpty) && attempt < 5:
			continue // a child was created meanwhile
		default:
			return fmt.Errorf("delete %s: %w", p, err)
		}
	}
}

// missingTable is the error of an absent table node.
func (l *Locker) missingTable(err error) error {
	return &dialects.MissingTableError{Table: l.root, CreateSQL: "create " + l.root, Err: err} // the zkCli command
}

// Acquire implements dialects.Locker with Curator's recipe: it creates an
// ephemeral sequential node "_c_<uuid>-lock-" under the name's node; the
// lowest sequence holds. Without a wait a refused try deletes its node at
// once; with one, the node waits in the queue watching its predecessor,
// as Curator's waiters do, until opts.Wait has passed — through a lost
// connection too, queueing again once the session is back.
func (l *Locker) Acquire(ctx context.Context, name string, opts dialects.Options) (dialects.Lease, error) {
	if err := dialects.CheckName(name); err != nil {
		return nil, err
	}
	opts, err := opts.Normalize()
	if err != nil {
		return nil, err
	}
	if err := l.b.ready(ctx); err != nil {
		return nil, wrap("acquire", err)
	}
	lease, err := l.acquire(ctx, name, opts)
	if err != nil {
		return nil, wrap("acquire", err)
	}
	return lease, nil
}

// attempt is one acquire's own lock node while it is judged.
type attempt struct {
	l       *Locker
	name    string
	opts    dialects.Options
	dir     string // the name's node
	path    string // our lock node, "" while there is none
	seq     int64
	data    holderData
	version int32
	before  time.Time // host clock just before the node was created
	waited  bool      // the node waited in the queue before it got the lock
	// afterAtLeast: the node was created while the last holder's at-least
	// node was there, and got the lock only once it had ended; its
	// creation time may be before that end.
	afterAtLeast bool
	// childWatch is the watch on the name's children that the first
	// judgement set: the lease it grants watches its node through it
	// until it fires (lease.watch), so an uncontended acquire sets no
	// watch of its own.
	childWatch <-chan zk.Event
	lastNow    time.Time // the server clock when last read through our node
	hostSent   time.Time // the host clock just before lastNow was asked for
	hostThen   time.Time // the host clock just after lastNow was read
}

func (l *Locker) acquire(ctx context.Context, name string, opts dialects.Options) (*lease, error) {
	a := &attempt{l: l, name: name, opts: opts, dir: l.NamePath(name),
		data: holderData{Tool: toolName, Owner: opts.Owner, AtMost: opts.AtMost.Milliseconds(), AtLeast: opts.AtLeast.Milliseconds()}}
	deadline := time.Now().Add(opts.Wait)
	granted := false
	defer func() {
		if !granted {
			a.dropNode()
		}
	}()
	for {
		if a.path == "" {
			if err := a.create(ctx); err != nil {
				if a.reconnect(ctx, err, deadline) {
					continue
				}
				return nil, err
			}
		}
		blocked, wake, err := a.judge(ctx)
		if err != nil {
			if a.reconnect(ctx, err, deadline) {
				continue
			}
			return nil, err
		}
		if blocked == nil {
			lease, err := a.grant(ctx)
			if errors.Is(err, zk.ErrNoNode) {
				a.path = "" // taken over while it waited: queue again
				continue
			}
			if err != nil {
				if a.reconnect(ctx, err, deadline) {
					continue
				}
				return nil, err
			}
			granted = true
			return lease, nil
		}
		if !time.Now().Before(deadline) {
			return nil, blocked
		}
		if err := a.wait(ctx, wake, deadline); err != nil {
			return nil, fmt.Errorf("gave up waiting: %w (last try: %v)", err, blocked)
		}
	}
}

// reconnect lets a waiting acquire ride out a lost connection (a server
// gone, an ensemble electing a leader): when err is a connection loss and
// the wait has time left, our node is dropped — left in the queue, it
// would block the node queued after the reconnection — and the session
// awaited until the deadline. It reports whether to try again.
func (a *attempt) reconnect(ctx context.Context, err error, deadline time.Time) bool {
	if !connectionLost(err) || !time.Now().Before(deadline) {
		return false
	}
	a.dropNode()
	wctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	return a.l.b.ready(wctx) == nil
}

// connectionLost reports whether err is the loss of the connection to
// the ensemble (the session may live on), not an answer of the server.
func connectionLost(err error) bool {
	return errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrNoServer)
}

// create makes our ephemeral sequential lock node, creating the name's
// node first when it is missing. A table node that does not exist is a
// *dialects.MissingTableError.
func (a *attempt) create(ctx context.Context) error {
	conn := a.l.b.conn
	prefix := a.dir + "/" + protectedPrefix + newUUID() + "-" + lockPrefix
	for try := 0; ; try++ {
		a.before = time.Now()
		p, err := a.createNode(ctx, prefix)
		switch {
		case err == nil:
			n, _ := parseLockNode(p[strings.LastIndexByte(p, '/')+1:])
			a.path, a.seq, a.version = p, n.seq, 0
			return nil
		case errors.Is(err, zk.ErrNoNode) && try < 3:
			_, err := call(ctx, func() (string, error) { return conn.Create(a.dir, nil, 0, a.l.b.acl) })
			switch {
			case err == nil, errors.Is(err, zk.ErrNodeExists):
			case errors.Is(err, zk.ErrNoNode):
				return a.l.missingTable(err)
			case errors.Is(err, zk.ErrNoAuth):
				return a.l.b.noAuth(a.l.root, "create", err)
			default:
				return fmt.Errorf("create %s: %w", a.dir, err)
			}
		case errors.Is(err, zk.ErrNoAuth):
			return a.l.b.noAuth(a.dir, "create", err)
		default:
			return fmt.Errorf("create a lock node under %s: %w", a.dir, err)
		}
	}
}

// createNode creates the lock node. When ctx ends first, or the
// connection drops before the answer, the node may still be created: it
// is found by its protected prefix and deleted in the background, as
// Curator's protected mode does.
func (a *attempt) createNode(ctx context.Context, prefix string) (string, error) {
	conn := a.l.b.conn
	ch := make(chan result[string], 1)
	data := a.data.bytes()
	go func() {
		p, err := conn.Create(prefix, data, zk.FlagEphemeral|zk.FlagSequence, a.l.b.acl)
		ch <- result[string]{p, err}
	}()
	select {
	case r := <-ch:
		if errors.Is(r.err, zk.ErrConnectionClosed) {
			go a.l.b.deleteByPrefix(a.dir, prefix)
		}
		return r.v, r.err
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.err == nil {
				a.l.b.deleteNode(r.v)
			} else if errors.Is(r.err, zk.ErrConnectionClosed) {
				a.l.b.deleteByPrefix(a.dir, prefix)
			}
		}()
		return "", ctx.Err()
	}
}

// judge reads the queue of the name: nil when our node holds (lowest,
// and no at-least of the last holder still runs); else the refusal, and
// when to look again without an event (zero: on the watch only).
func (a *attempt) judge(ctx context.Context) (*dialects.HeldError, time.Time, error) {
	conn := a.l.b.conn
	for {
		var children []string
		var err error
		if a.childWatch == nil {
			var r childrenW
			r, err = call(ctx, func() (childrenW, error) { ch, _, w, err := conn.ChildrenW(a.dir); return childrenW{ch, w}, err })
			children, a.childWatch = r.children, r.watch
		} else {
			children, err = call(ctx, func() ([]string, error) { ch, _, err := conn.Children(a.dir); return ch, err })
		}
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("list %s: %w", a.dir, err)
		}
		nodes := sortedLockNodes(children)
		ours := -1
		for i, n := range nodes {
			if n.seq == a.seq && a.dir+"/"+n.name == a.path {
				ours = i
			}
		}
		if ours < 0 {
			a.path = ""
			return nil, time.Time{}, fmt.Errorf("%w: our lock node %s vanished while acquiring (the session was lost)", dialects.ErrLeaseLost, a.dir)
		}
		hasAtLeast := false
		for _, c := range children {
			if c == atLeastNode {
				hasAtLeast = true
			}
		}
		if ours == 0 {
			if !hasAtLeast {
				return nil, time.Time{}, nil
			}
			held, wake, err := a.judgeAtLeast(ctx)
			if err != nil || held != nil {
				return held, wake, err
			}
			a.afterAtLeast = true
			return nil, time.Time{}, nil
		}
		// Writing our node reads the server clock and keeps a waiting
		// node's own lease fresh, so that it is never taken for an
		// expired holder the moment it becomes the lowest.
		now, err := a.serverNow(ctx)
		if err != nil {
			return nil, time.Time{}, err
		}
		lowest, found, err := a.l.b.readNode(ctx, a.dir, nodes[0])
		if err != nil {
			return nil, time.Time{}, err
		}
		if !found {
			continue // released meanwhile: look again
		}
		held := &dialects.HeldError{Name: a.name, Holder: lowest.holderName()}
		until, hasLease := lowest.until()
		if !hasLease {
			return held, time.Time{}, nil
		}
		held.Until = until
		if until.After(now) {
			return held, a.hostTime(until), nil
		}
		// The holder's lease ran out: take the lock over by deleting its
		// node, unless it was refreshed (a new version) meanwhile.
		_, err = call(ctx, func() (struct{}, error) {
			return struct{}{}, conn.Delete(a.dir+"/"+lowest.name, lowest.stat.Version)
		})
		if err != nil && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrBadVersion) {
			return nil, time.Time{}, fmt.Errorf("take over the expired lock node %s: %w", lowest.name, err)
		}
	}
}

// childrenW is a listing with its watch.
type childrenW struct {
	children []string
	watch    <-chan zk.Event
}

// judgeAtLeast judges the at-least node left by the last holder while our
// node is the lowest: a refusal until it ends; after, it is deleted. A
// refused node is dropped (its sequence would otherwise hold the lock
// for Curator peers), to be created again when the at-least ends, so
// the next holder's locked-at is after it.
func (a *attempt) judgeAtLeast(ctx context.Context) (*dialects.HeldError, time.Time, error) {
	conn := a.l.b.conn
	p := a.dir + "/" + atLeastNode
	data, stat, err := a.l.b.get(ctx, p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, time.Time{}, nil
	}
	if err != nil {
		return nil, time.Time{}, err
	}
	keep, ok := parseAtLeast(data)
	now, err := a.serverNow(ctx)
	if err != nil {
		return nil, time.Time{}, err
	}
	if ok && msTime(keep.Until).After(now) {
		until := msTime(keep.Until)
		wake := a.hostTime(until)
		a.dropNode()
		return &dialects.HeldError{Name: a.name, Holder: keep.Owner, Until: until}, wake, nil
	}
	_, err = call(ctx, func() (struct{}, error) { return struct{}{}, conn.Delete(p, stat.Version) })
	if err != nil && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrBadVersion) {
		return nil, time.Time{}, fmt.Errorf("delete the ended at-least node %s: %w", p, err)
	}
	return nil, time.Time{}, nil
}

// serverNow reads the server clock through our own node: writing its
// data again returns the write's time.
func (a *attempt) serverNow(ctx context.Context) (time.Time, error) {
	conn := a.l.b.conn
	sent := time.Now()
	stat, err := call(ctx, func() (*zk.Stat, error) { return conn.Set(a.path, a.data.bytes(), -1) })
	if err != nil {
		return time.Time{}, fmt.Errorf("read the server clock through %s: %w", a.path, err)
	}
	a.version = stat.Version
	a.lastNow, a.hostSent, a.hostThen = msTime(stat.Mtime), sent, time.Now()
	return a.lastNow, nil
}

// hostTime estimates the host-clock instant of server instant t, from the
// last server-clock read.
func (a *attempt) hostTime(t time.Time) time.Time {
	if a.lastNow.IsZero() {
		return time.Now().Add(time.Second)
	}
	return a.hostThen.Add(t.Sub(a.lastNow))
}

// wait waits for the predecessor's watch, the estimated end of a lease
// or at-least, deadline or ctx, whichever comes first, with a look
// every second at most in case an event was missed. It returns at once
// when there is nothing to wait for (watchPredecessor).
func (a *attempt) wait(ctx context.Context, wake, deadline time.Time) error {
	var watch <-chan zk.Event
	if a.path != "" {
		a.waited = true
		var now bool
		if watch, now = a.watchPredecessor(ctx); now {
			return nil
		}
	}
	until := deadline
	if !wake.IsZero() && wake.Before(until) {
		until = wake
	}
	look := min(time.Second, a.opts.AtMost/3) // a waiting node is written at least this often
	if limit := time.Now().Add(look); limit.Before(until) {
		until = limit
	}
	t := time.NewTimer(time.Until(until))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-watch:
	case <-t.C:
	}
	return nil
}

// watchPredecessor watches the node queued just before ours, as Curator
// does (with getData, which leaves no watch behind on a node already
// gone). now is true when the queue is to be judged again at once: our
// node became the lowest since it was judged (the holder released
// meanwhile), our node or its predecessor is gone. A failed read of the
// queue gives neither (the wait's look finds out later).
func (a *attempt) watchPredecessor(ctx context.Context) (watch <-chan zk.Event, now bool) {
	conn := a.l.b.conn
	children, err := call(ctx, func() ([]string, error) { ch, _, err := conn.Children(a.dir); return ch, err })
	if err != nil {
		return nil, false
	}
	nodes := sortedLockNodes(children)
	for i, n := range nodes {
		if a.dir+"/"+n.name != a.path {
			continue
		}
		if i == 0 {
			return nil, true // the lowest now: nothing to wait for
		}
		ch, err := call(ctx, func() (<-chan zk.Event, error) {
			_, _, ch, err := conn.GetW(a.dir + "/" + nodes[i-1].name)
			return ch, err
		})
		switch {
		case errors.Is(err, zk.ErrNoNode):
			return nil, true // gone already
		case err != nil:
			return nil, false
		}
		return ch, false
	}
	return nil, true // our node is gone: judge says so
}

// grant turns our node into a held lease. A node that waited in the
// queue, or for the last holder's at-least to end, writes the time it got
// the lock (its lease runs from then, and the next holder's locked-at is
// never before the last one's at-least end).
func (a *attempt) grant(ctx context.Context) (*lease, error) {
	if a.waited || a.afterAtLeast {
		now, err := a.serverNow(ctx)
		if err != nil {
			return nil, err
		}
		a.data.LockedAt = now.UnixMilli()
		a.before = a.hostSent // at-most counts from before the server's locked-at, so the holder ends first
		stat, err := call(ctx, func() (*zk.Stat, error) { return a.l.b.conn.Set(a.path, a.data.bytes(), a.version) })
		if err != nil {
			return nil, fmt.Errorf("write the locked-at of %s: %w", a.path, err)
		}
		a.version = stat.Version
	}
	s := &lease{locker: a.l, name: a.name, owner: a.opts.Owner, path: a.path, seq: a.seq, data: a.data,
		version: a.version, atMost: a.opts.AtMost, atLeast: a.opts.AtLeast, grantedBy: time.Now(), childWatch: a.childWatch,
		until: a.before.Add(a.opts.AtMost), done: make(chan struct{})}
	if !a.l.b.track(s) {
		return nil, fmt.Errorf("%w: the backend was closed", dialects.ErrLeaseLost)
	}
	s.start()
	return s, nil
}

// dropNode deletes our node, if any: at once, so that a refused try
// leaves nothing in the queue, and in the background when the connection
// is down.
func (a *attempt) dropNode() {
	if a.path == "" {
		return
	}
	p := a.path
	a.path, a.waited, a.afterAtLeast = "", false, false
	ctx, cancel := context.WithTimeout(context.Background(), dropTimeout)
	defer cancel()
	_, err := call(ctx, func() (struct{}, error) { return struct{}{}, a.l.b.conn.Delete(p, -1) })
	if err != nil && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrSessionExpired) {
		a.l.b.deleteNode(p)
	}
}

// dropTimeout bounds the synchronous delete of a refused try's node.
const dropTimeout = 5 * time.Second

// deleteNode deletes the node p, retrying in the background while the
// connection is down, until it is gone, the session ended (which deleted
// it) or the backend was closed.
func (b *Backend) deleteNode(p string) {
	go func() {
		for try := 0; try < 60; try++ {
			err := b.conn.Delete(p, -1)
			switch {
			case err == nil, errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrSessionExpired),
				errors.Is(err, zk.ErrClosing), errors.Is(err, zk.ErrNoAuth):
				return
			}
			b.mu.Lock()
			closed := b.closed
			b.mu.Unlock()
			if closed {
				return
			}
			time.Sleep(500 * time.Millisecond)
		}
	}()
}

// deleteByPrefix finds the protected node created with prefix (when the
// answer to its create was lost) and deletes it.
func (b *Backend) deleteByPrefix(dir, prefix string) {
	base := prefix[strings.LastIndexByte(prefix, '/')+1:]
	go func() {
		for try := 0; try < 60; try++ {
			children, _, err := b.conn.Children(dir)
			if err == nil {
				for _, c := range children {
					if strings.HasPrefix(c, base) {
						b.deleteNode(dir + "/" + c)
					}
				}
				return
			}
			if errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrClosing) {
				return
			}
			time.Sleep(500 * time.Millisecond)
		}
	}()
}

// get reads a node's data and stat under ctx.
func (b *Backend) get(ctx context.Context, p string) ([]byte, *zk.Stat, error) {
	type got struct {
		data []byte
		stat *zk.Stat
	}
	r, err := call(ctx, func() (got, error) { d, s, err := b.conn.Get(p); return got{d, s}, err })
	return r.data, r.stat, err
}

// readNode reads lock node n under dir; found is false when it is gone.
func (b *Backend) readNode(ctx context.Context, dir string, n lockNode) (node, bool, error) {
	data, stat, err := b.get(ctx, dir+"/"+n.name)
	if errors.Is(err, zk.ErrNoNode) {
		return node{}, false, nil
	}
	if err != nil {
		return node{}, false, fmt.Errorf("read %s/%s: %w", dir, n.name, err)
	}
	return readNode(n, data, stat), true, nil
}

// newUUID returns a random (version 4) UUID in its canonical form, as
// Curator's protected mode puts in node names.
func newUUID() string {
	var u [16]byte
	_, _ = rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}
