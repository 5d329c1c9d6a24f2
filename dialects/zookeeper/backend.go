package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/schedlock/schedlock/dialects"
)

// Backend is one session with a ZooKeeper ensemble. It implements
// dialects.Backend, LockLister, LockBreaker and Prober. Its leases live
// as long as the session: a disconnection or an expired session ends
// every one of them at once (Lease.Done closes, Lease.Err matches
// dialects.ErrLeaseLost).
type Backend struct {
	cfg   Config
	conn  *zk.Conn
	acl   []zk.ACL
	info  dialects.Info
	facts *facts // what detect learned beyond info
	// factsMu guards info and facts once opened: the member count is
	// read when first needed (members).
	factsMu sync.Mutex

	mu     sync.Mutex
	leases map[*lease]struct{}
	closed bool
	// dialErr is the last failed dial, for the error of an ensemble that
	// could not be reached.
	dialErr error
	dials   int

	benchRaw benchRaw // the table bench's raw clients share
}

var (
	_ dialects.Backend      = (*Backend)(nil)
	_ dialects.LockLister   = (*Backend)(nil)
	_ dialects.LockBreaker  = (*Backend)(nil)
	_ dialects.Prober       = (*Backend)(nil)
	_ dialects.RiskReporter = (*Backend)(nil)
)

// nopLogger keeps the client library quiet: backends never print.
type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

// connectWait bounds the wait for a first session when ctx has no
// deadline.
const connectWait = 10 * time.Second

// Open connects to the ensemble of the zk:// DSN raw, waits for a
// session, adds the digest credentials and detects the servers. An
// ensemble that cannot be reached in time is a *dialects.UnreachableError;
// credentials the chroot's ACL refuses are a *dialects.PrivilegeError.
func Open(ctx context.Context, raw string) (*Backend, error) {
	cfg, err := ParseDSN(raw)
	if err != nil {
		return nil, err
	}
	return OpenConfig(ctx, cfg)
}

// OpenConfig is Open for a parsed DSN.
func OpenConfig(ctx context.Context, cfg Config) (*Backend, error) {
	b := &Backend{cfg: cfg, leases: map[*lease]struct{}{}, acl: zk.WorldACL(zk.PermAll)}
	dial := func(network, address string, timeout time.Duration) (net.Conn, error) {
		c, err := net.DialTimeout(network, address, timeout)
		b.mu.Lock()
		b.dials++
		if err != nil {
			b.dialErr = err
		}
		b.mu.Unlock()
		return c, err
	}
	conn, events, err := zk.Connect(cfg.Servers, cfg.SessionTimeout,
		zk.WithLogger(nopLogger{}), zk.WithLogInfo(false), zk.WithDialer(dial), zk.WithEventCallback(b.onEvent))
	if err != nil {
		return nil, dialects.Unreachable(fmt.Errorf("zookeeper %s: %w", cfg, err))
	}
	go func() { // the callback sees every event; the channel must not fill
		for range events {
		}
	}()
	b.conn = conn
	if err := b.waitSession(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	if cfg.User != "" {
		if _, err := call(ctx, func() (struct{}, error) {
			return struct{}{}, conn.AddAuth("digest", []byte(cfg.User+":"+cfg.Password))
		}); err != nil {
			conn.Close()
			return nil, dialects.Unreachable(fmt.Errorf("zookeeper digest authentication as %s: %w", cfg.User, err))
		}
		b.acl = zk.AuthACL(zk.PermAll)
	}
	if err := b.checkAccess(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	b.info, b.facts = b.detect(ctx)
	return b, nil
}

// waitSession waits until the client has a session, ctx ends, or every
// server of the ensemble refused twice.
func (b *Backend) waitSession(ctx context.Context) error {
	wait := connectWait
	if dl, ok := ctx.Deadline(); ok {
		wait = time.Until(dl)
	}
	deadline := time.Now().Add(wait)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if b.conn.State() == zk.StateHasSession {
			return nil
		}
		b.mu.Lock()
		dials, dialErr := b.dials, b.dialErr
		b.mu.Unlock()
		if dialErr != nil && dials >= 2*len(b.cfg.Servers) && b.conn.State() != zk.StateHasSession {
			return dialects.Unreachable(fmt.Errorf("zookeeper %s: no session: %w", b.cfg, dialErr))
		}
		select {
		case <-ctx.Done():
			return dialects.Unreachable(fmt.Errorf("zookeeper %s: no session: %w", b.cfg, ctx.Err()))
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			err := error(context.DeadlineExceeded)
			if dialErr != nil {
				err = fmt.Errorf("%w (last dial: %v)", err, dialErr)
			}
			return dialects.Unreachable(fmt.Errorf("zookeeper %s: no session within %s: %w", b.cfg, wait.Round(time.Millisecond), err))
		}
	}
}

// ready waits, at most one session timeout, for the client to have a
// session again after a disconnection: a lock is only taken on a session
// the server knows.
func (b *Backend) ready(ctx context.Context) error {
	if b.conn.State() == zk.StateHasSession {
		return nil
	}
	deadline := time.Now().Add(b.cfg.SessionTimeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for b.conn.State() != zk.StateHasSession {
		if time.Now().After(deadline) {
			return fmt.Errorf("no ZooKeeper session with %s (state %s) after waiting %s", b.cfg, b.conn.State(), b.cfg.SessionTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}

// checkAccess proves the session may read the chroot (or its nearest
// existing ancestor): credentials its ACL refuses are a PrivilegeError.
func (b *Backend) checkAccess(ctx context.Context) error {
	p := b.cfg.Chroot
	for {
		node := p
		if node == "" {
			node = "/"
		}
		_, err := call(ctx, func() ([]string, error) { ch, _, err := b.conn.Children(node); return ch, err })
		switch {
		case err == nil:
			return nil
		case errors.Is(err, zk.ErrNoNode) && p != "":
			p = p[:lastSlash(p)]
			continue
		case errors.Is(err, zk.ErrNoAuth):
			return b.noAuth(node, "read", err)
		default:
			return dialects.Unreachable(fmt.Errorf("zookeeper %s: read %s: %w", b.cfg, node, err))
		}
	}
}

func lastSlash(p string) int {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return i
		}
	}
	return 0
}

// noAuth is the PrivilegeError of a node whose ACL refuses this session.
func (b *Backend) noAuth(node, what string, err error) error {
	who := "an unauthenticated session"
	grant := "connect with digest credentials the node's ACL allows: zk://user:pass@host/chroot"
	if b.cfg.User != "" {
		who = "digest user " + b.cfg.User
		grant = "setAcl " + node + " auth:" + b.cfg.User + ":cdrwa (as a user the ACL allows), or use credentials it allows"
	}
	return &dialects.PrivilegeError{
		Privilege: what + " on " + node,
		Grant:     grant,
		Err:       fmt.Errorf("the ACL of %s refuses %s (%w)", node, who, err),
	}
}

// onEvent sees every event of the session, in the client's goroutines:
// losing the connection or the session ends every lease at once. It must
// not block.
func (b *Backend) onEvent(ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	switch ev.State {
	case zk.StateDisconnected:
		b.loseAll(fmt.Errorf("%w: the connection to ZooKeeper %s was lost; the session may expire and free the lock at any moment", dialects.ErrLeaseLost, ev.Server))
	case zk.StateExpired:
		b.loseAll(fmt.Errorf("%w: the ZooKeeper session expired and its lock nodes were deleted", dialects.ErrLeaseLost))
	case zk.StateAuthFailed:
		b.loseAll(fmt.Errorf("%w: ZooKeeper refused the session's authentication", dialects.ErrLeaseLost))
	}
}

// loseAll ends every live lease with err.
func (b *Backend) loseAll(err error) {
	b.mu.Lock()
	all := make([]*lease, 0, len(b.leases))
	for l := range b.leases {
		all = append(all, l)
	}
	b.mu.Unlock()
	for _, l := range all {
		l.lose(err, true)
	}
}

func (b *Backend) track(l *lease) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	b.leases[l] = struct{}{}
	return true
}

func (b *Backend) untrack(l *lease) {
	b.mu.Lock()
	delete(b.leases, l)
	b.mu.Unlock()
}

// Detected implements dialects.Backend: the version and mode srvr gave
// at open; an ensemble's mode names its member count once Probe read it
// (before, the modes srvr reported: "ensemble (leader, follower)").
func (b *Backend) Detected() dialects.Info {
	b.factsMu.Lock()
	defer b.factsMu.Unlock()
	return b.info
}

// Config is the parsed DSN (its Password included: never print it).
func (b *Backend) Config() Config { return b.cfg }

// SessionID is the session's id, as ZooKeeper's own tools show it
// (lock nodes record it as their ephemeral owner).
func (b *Backend) SessionID() int64 { return b.conn.SessionID() }

// Locker implements dialects.Backend: the table strategy on t.
func (b *Backend) Locker(strategy dialects.Strategy, t dialects.Table) (dialects.Locker, error) {
	switch strategy {
	case dialects.StrategyTable:
		return b.LeaseLocker(t)
	case dialects.StrategySession:
		return nil, wrap("session locker", fmt.Errorf("%w: ZooKeeper locks are Curator's ephemeral-node recipe, offered as the table strategy", dialects.ErrUnsupported))
	}
	return nil, dialects.Invalidf("unknown strategy %q: use session or table", strategy)
}

// recommendation is why the table strategy is the one on ZooKeeper.
const recommendation = "ZooKeeper locks are Curator's InterProcessMutex recipe (ephemeral sequential nodes, lowest sequence holds), with a lease bound, at-least and the sequence as fencing token"

// Recommend implements dialects.Backend: the table strategy (the risks
// detection found are the probe's Capabilities.Risks).
func (b *Backend) Recommend() (dialects.Strategy, string) {
	return dialects.StrategyTable, recommendation
}

// ReleaseDeletesKey implements dialects.KeyDeleter: a release, a forced
// expiry and a resume delete the lock's key.
func (b *Backend) ReleaseDeletesKey() bool { return true }

// Close implements dialects.Backend: it closes the session, which deletes
// its ephemeral lock nodes at once; leases still held end as lost.
func (b *Backend) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.mu.Unlock()
	b.loseAll(fmt.Errorf("%w: the ZooKeeper session was closed", dialects.ErrLeaseLost))
	b.conn.Close()
	return nil
}

// result is one call's answer.
type result[T any] struct {
	v   T
	err error
}

// call runs fn, a blocking client call, and returns its answer, or
// ctx's error as soon as ctx ends (fn then finishes in the background:
// only calls whose late effect is harmless, or is undone by the caller,
// go through here).
func call[T any](ctx context.Context, fn func() (T, error)) (T, error) {
	if err := ctx.Err(); err != nil {
		var zero T
		return zero, err
	}
	ch := make(chan result[T], 1)
	go func() {
		v, err := fn()
		ch <- result[T]{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// ReadConn is the session's client, for tests and tools that read the
// nodes themselves. Locks must only be taken through the Locker.
func (b *Backend) ReadConn() *zk.Conn { return b.conn }
