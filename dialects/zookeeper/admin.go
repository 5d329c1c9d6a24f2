package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/schedlock/schedlock/dialects"
)

// serverNow reads the server clock: it writes the table node's data
// (empty, as schedlock and Curator leave it) again and returns the time
// of that write.
func (l *Locker) serverNow(ctx context.Context) (time.Time, error) {
	stat, err := call(ctx, func() (*zk.Stat, error) { return l.b.conn.Set(l.root, nil, -1) })
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return time.Time{}, l.missingTable(err)
	case errors.Is(err, zk.ErrNoAuth):
		return time.Time{}, l.b.noAuth(l.root, "write", err)
	case err != nil:
		return time.Time{}, fmt.Errorf("read the server clock through %s: %w", l.root, err)
	}
	return msTime(stat.Mtime), nil
}

// state is what one lock name's node holds.
type state struct {
	nodes   []node       // the lock nodes, in queue order (the first holds)
	atLeast *atLeastData // the at-least of the last release, when present
	keepVer int32
	now     time.Time // the server clock when read
}

// readState reads the queue of the lock called name; found is false when
// the name has no node. now is the server clock when known (zero: read
// it).
func (l *Locker) readState(ctx context.Context, name string, now time.Time) (state, bool, error) {
	var st state
	dir := l.NamePath(name)
	if now.IsZero() {
		var err error
		if now, err = l.serverNow(ctx); err != nil {
			return st, false, err
		}
	}
	st.now = now
	children, err := call(ctx, func() ([]string, error) { ch, _, err := l.b.conn.Children(dir); return ch, err })
	if errors.Is(err, zk.ErrNoNode) {
		return st, false, nil
	}
	if err != nil {
		return st, false, fmt.Errorf("list %s: %w", dir, err)
	}
	for _, n := range sortedLockNodes(children) {
		got, found, err := l.b.readNode(ctx, dir, n)
		if err != nil {
			return st, false, err
		}
		if found {
			st.nodes = append(st.nodes, got)
		}
	}
	for _, c := range children {
		if c != atLeastNode {
			continue
		}
		data, stat, err := l.b.get(ctx, dir+"/"+c)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return st, false, err
		}
		if keep, ok := parseAtLeast(data); ok {
			st.atLeast, st.keepVer = &keep, stat.Version
		}
	}
	return st, true, nil
}

// row is the lock as a lease-table row: its holder node, else the
// at-least of the last release; found is false when neither exists. A
// foreign holder (Curator) has no lease: it holds while its session
// lives, shown as a lease ending one session timeout from now, the
// soonest its end could free the lock.
func (l *Locker) row(name string, st state) (dialects.Row, bool) {
	r := dialects.Row{Name: name, DBNow: st.now, HasToken: true}
	if len(st.nodes) > 0 {
		h := st.nodes[0]
		r.Owner, r.Token, r.LockedAt = h.holderName(), h.seq, h.lockedAt()
		if until, ok := h.until(); ok {
			r.Until = until
		} else {
			r.Until = st.now.Add(l.b.cfg.SessionTimeout)
		}
		if keep := st.atLeast; keep != nil && msTime(keep.Until).After(r.Until) {
			r.Until = msTime(keep.Until)
		}
		return r, true
	}
	if keep := st.atLeast; keep != nil {
		r.Owner, r.Token, r.LockedAt, r.Until = keep.Owner, keep.Token, msTime(keep.LockedAt), msTime(keep.Until)
		return r, true
	}
	return r, false
}

// Inspect implements dialects.TableLocker: the holder of name (the lowest
// lock node), or the at-least node of its last release.
func (l *Locker) Inspect(ctx context.Context, name string) (dialects.Row, bool, error) {
	if err := dialects.CheckName(name); err != nil {
		return dialects.Row{}, false, err
	}
	st, found, err := l.readState(ctx, name, time.Time{})
	if err != nil || !found {
		return dialects.Row{}, false, wrap("inspect", err)
	}
	r, found := l.row(name, st)
	return r, found, nil
}

// Handle implements dialects.TableLocker: a lease on the lock node of
// owner's whose sequence is token (the holder's when token is 0), found
// when it is refreshed or released.
func (l *Locker) Handle(name, owner string, token int64, opts dialects.Options) (dialects.Lease, error) {
	opts, err := dialects.HandleOptions(name, owner, token, opts)
	if err != nil {
		return nil, err
	}
	return &lease{locker: l, name: name, owner: owner, seq: token, atMost: opts.AtMost, atLeast: opts.AtLeast,
		handle: true, grantedBy: time.Now(), until: time.Now().Add(opts.AtMost), done: make(chan struct{})}, nil
}

// Expire implements dialects.LeaseLocker: it deletes the holder's lock
// node (and the at-least node), whoever holds it. A schedlock holder is
// told at once through its watch; a Curator holder is not (Curator does
// not watch its own node) and should be stopped as well. The next waiter
// in the queue gets the lock.
func (l *Locker) Expire(ctx context.Context, name string) (bool, error) {
	if err := dialects.CheckName(name); err != nil {
		return false, err
	}
	st, found, err := l.readState(ctx, name, time.Time{})
	if err != nil || !found {
		return false, wrap("force release", err)
	}
	r, held := l.row(name, st)
	changed := false
	dir := l.NamePath(name)
	if len(st.nodes) > 0 {
		h := st.nodes[0]
		_, err := call(ctx, func() (struct{}, error) { return struct{}{}, l.b.conn.Delete(dir+"/"+h.name, h.stat.Version) })
		switch {
		case err == nil:
			changed = true
		case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrBadVersion):
		default:
			return false, wrap("force release", err)
		}
	}
	if st.atLeast != nil {
		_, err := call(ctx, func() (struct{}, error) { return struct{}{}, l.b.conn.Delete(dir+"/"+atLeastNode, st.keepVer) })
		if err != nil && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrBadVersion) {
			return false, wrap("force release", err)
		}
		if err == nil && len(st.nodes) == 0 {
			changed = true
		}
	}
	return changed && held && r.Until.After(st.now), nil
}

// ListLocks implements dialects.LockLister: every lock name under the
// table nodes of opts.Tables (the default table node "schedlock" when
// none is given; it is no error when that one does not exist). Each
// holder is one entry (held, or expired when its lease ran out), each
// waiter in the queue one more (waiting), and a name whose last holder
// left an at-least node is held until it ends. Foreign holders (Curator)
// are listed with their data as owner and their session as holder.
func (b *Backend) ListLocks(ctx context.Context, opts dialects.ListOptions) (*dialects.Listing, error) {
	if err := opts.CheckNames(); err != nil {
		return nil, err
	}
	listing := &dialects.Listing{Locks: []dialects.LockEntry{}}
	if opts.Strategy == dialects.StrategySession {
		return listing, nil
	}
	tables := opts.Tables
	explicit := len(tables) > 0
	if !explicit {
		tables = []dialects.Table{{}}
	}
	for _, t := range tables {
		if explicit {
			rt, err := dialects.ResolveAdminTable(t)
			if err != nil {
				return nil, err
			}
			t = rt
		}
		tl, err := b.LeaseLocker(t)
		if err != nil {
			return nil, err
		}
		l := tl.(*Locker)
		entries, err := l.list(ctx, opts)
		if errors.Is(err, dialects.ErrNoTable) && !explicit {
			continue
		}
		if err != nil {
			return nil, wrap("list locks", err)
		}
		listing.Tables = append(listing.Tables, dialects.Table{Preset: dialects.PresetSchedlock, Name: l.schema.Table})
		listing.Locks = append(listing.Locks, entries...)
	}
	sort.SliceStable(listing.Locks, func(i, j int) bool {
		a, c := listing.Locks[i], listing.Locks[j]
		return a.Name < c.Name || a.Name == c.Name && a.Source < c.Source
	})
	return listing, nil
}

// list lists the locks under one table node.
func (l *Locker) list(ctx context.Context, opts dialects.ListOptions) ([]dialects.LockEntry, error) {
	children, err := call(ctx, func() ([]string, error) { ch, _, err := l.b.conn.Children(l.root); return ch, err })
	if errors.Is(err, zk.ErrNoNode) {
		return nil, l.missingTable(err)
	}
	if errors.Is(err, zk.ErrNoAuth) {
		return nil, l.b.noAuth(l.root, "read", err)
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", l.root, err)
	}
	sort.Strings(children)
	now, err := l.serverNow(ctx)
	if err != nil {
		return nil, err
	}
	var out []dialects.LockEntry
	for _, child := range children {
		name, _ := DecodeName(child)
		if len(opts.Names) > 0 && !(dialects.LockEntry{Name: name}).MatchesName(opts.Names) {
			continue
		}
		st, found, err := l.readState(ctx, name, now)
		if err != nil {
			return nil, err
		}
		if !found {
			continue
		}
		for _, e := range l.entries(name, child, st) {
			if opts.Keeps(e) {
				out = append(out, e)
			}
		}
	}
	return out, nil
}

// entries are the listed entries of one name.
func (l *Locker) entries(name, child string, st state) []dialects.LockEntry {
	base := dialects.LockEntry{Name: name, Strategy: dialects.StrategyTable, Source: l.schema.Table, Preset: dialects.PresetSchedlock, DBNow: st.now}
	if child != name {
		base.Key = child
	}
	var out []dialects.LockEntry
	if r, found := l.row(name, st); found {
		e := base
		e.Owner, e.Token, e.HasToken, e.LockedAt, e.Until = r.Owner, r.Token, true, r.LockedAt, r.Until
		e.SetRowState(r)
		if len(st.nodes) > 0 {
			e.Holder = holderOf(st.nodes[0])
		}
		out = append(out, e)
	} else {
		e := base
		e.State = dialects.StateFree
		out = append(out, e)
	}
	for i := 1; i < len(st.nodes); i++ {
		n := st.nodes[i]
		e := base
		e.State, e.Owner, e.Token, e.HasToken, e.LockedAt = dialects.StateWaiting, n.holderName(), n.seq, true, msTime(n.stat.Ctime)
		e.Holder = holderOf(n)
		out = append(out, e)
	}
	return out
}

// holderOf is the session behind a lock node.
func holderOf(n node) *dialects.Holder {
	h := &dialects.Holder{SessionID: fmt.Sprintf("0x%x", n.stat.EphemeralOwner), Since: msTime(n.stat.Ctime)}
	if n.schedlock {
		h.Application = toolName
	} else {
		h.Application = "curator or another client"
		h.Client = n.owner
	}
	return h
}

// FindLock implements dialects.LockLister.
func (b *Backend) FindLock(ctx context.Context, name string, tables []dialects.Table) (*dialects.Listing, error) {
	if err := dialects.CheckName(name); err != nil {
		return nil, err
	}
	listing := &dialects.Listing{Locks: []dialects.LockEntry{}}
	explicit := len(tables) > 0
	if !explicit {
		tables = []dialects.Table{{}}
	}
	for _, t := range tables {
		tl, err := b.LeaseLocker(t)
		if err != nil {
			return nil, err
		}
		l := tl.(*Locker)
		st, found, err := l.readState(ctx, name, time.Time{})
		if errors.Is(err, dialects.ErrNoTable) && !explicit {
			continue
		}
		if err != nil {
			return nil, wrap("find lock", err)
		}
		listing.Tables = append(listing.Tables, dialects.Table{Preset: dialects.PresetSchedlock, Name: l.schema.Table})
		if found {
			listing.Locks = append(listing.Locks, l.entries(name, EncodeName(name), st)...)
		}
	}
	return listing, nil
}

// Liquibase implements dialects.LockBreaker: there is no Liquibase lock
// table in ZooKeeper.
func (b *Backend) Liquibase(string) (dialects.LiquibaseLock, error) {
	return nil, fmt.Errorf("%w: ZooKeeper has no Liquibase lock table", dialects.ErrUnsupported)
}

// LockAdmin implements dialects.LockBreaker: nil, the locks are nodes,
// freed through the table locker.
func (b *Backend) LockAdmin() dialects.LockAdmin { return nil }
