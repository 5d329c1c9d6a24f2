package etcd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/schedlock/schedlock/dialects"
)

// Locker is the locker of one lock space. It implements
// dialects.LeaseLocker; it is safe for
// concurrent use.
type Locker struct {
	b      *Backend
	space  space
	schema dialects.Schema
}

var (
	_ dialects.LeaseLocker = (*Locker)(nil)
)

func newLocker(b *Backend, sp space, schema dialects.Schema) *Locker {
	return &Locker{b: b, space: sp, schema: schema}
}

// Strategy reports StrategyTable.
func (l *Locker) Strategy() dialects.Strategy { return dialects.StrategyTable }

// Schema implements dialects.TableLocker.
func (l *Locker) Schema() dialects.Schema { return l.schema }

// KeyPrefix is the prefix of every key of the lock called name, the name
// `etcdctl lock` takes (without the trailing slash) to share the lock.
func (l *Locker) KeyPrefix(name string) string { return l.space.lockPrefix(name) }

func quotePrefix(p string) string {
	if p == "" {
		return "the root"
	}
	return fmt.Sprintf("%q", p)
}

// Acquire implements dialects.Locker: one try, or tries until
// opts.Wait has passed — while the lock is held, and while etcd is
// unavailable (see unavailable), so a waiting acquire rides out a leader
// election. A waiting acquire refused by a holder watches the lock's
// keys for a delete from the revision it was refused at, as etcd's
// concurrency.Mutex waits for the key ahead of it, and tries again when
// one comes, at the holder's lease end, or after opts.RetryEvery (the
// fallback: a watch cut off or compacted away), whichever is first.
func (l *Locker) Acquire(ctx context.Context, name string, opts dialects.Options) (dialects.Lease, error) {
	if err := dialects.CheckName(name); err != nil {
		return nil, err
	}
	opts, err := opts.Normalize()
	if err != nil {
		return nil, err
	}
	var refusedAt int64 // the revision of the last refusal
	lease, err := dialects.RetryAcquireWoken(ctx, opts, func() (dialects.Lease, error) {
		lease, err := l.try(ctx, name, opts, &refusedAt)
		if err != nil {
			return nil, err // not a nil *lease in an interface
		}
		return lease, nil
	}, unavailable, func(ctx context.Context) (dialects.Wakeup, error) {
		return l.watchDeletes(ctx, name, refusedAt), nil
	})
	return lease, dialects.Wrap(Name, "acquire", l.b.denied(err))
}

// watchDeletes wakes a waiting acquire when a key of the lock called
// name is deleted (released, force-released, its lease ended) after
// revision rev. A watch that ends (compacted, cancelled) wakes no more:
// the poll remains.
func (l *Locker) watchDeletes(ctx context.Context, name string, rev int64) dialects.Wakeup {
	l.b.anchorWatchStream()
	wctx, cancel := context.WithCancel(ctx)
	events := l.b.cli.Watch(clientv3.WithRequireLeader(wctx), l.space.lockPrefix(name),
		clientv3.WithPrefix(), clientv3.WithRev(rev+1), clientv3.WithFilterPut())
	woken := make(chan struct{}, 1)
	go func() {
		for resp := range events {
			if resp.Err() != nil || resp.Canceled {
				cancel()
				continue // drained until the client closes the channel
			}
			if len(resp.Events) > 0 {
				select {
				case woken <- struct{}{}:
				default:
				}
			}
		}
	}()
	return dialects.Wakeup{Woken: woken, Stop: cancel}
}

// anchorWatchStream opens, once per backend, a watch of a key nobody
// writes, for as long as the backend is open: clientv3 runs the watches
// of one context's metadata on one gRPC stream, which lives as long as
// the context of the watch that opened it and asks the server for a new
// auth token each time it opens (a bcrypt password check with
// authentication on). Anchored, the waiters' watches share one stream
// instead of opening one each.
func (b *Backend) anchorWatchStream() {
	b.anchorOnce.Do(func() {
		events := b.cli.Watch(clientv3.WithRequireLeader(b.bg), b.cfg.root+"\x00schedlock-watch-anchor")
		go func() {
			for range events {
			}
		}()
	})
}

// try is one acquire: a lease (a spare, or granted now) and one
// transaction that creates the key only when the lock has no key at all.
// A refusal records the transaction's revision in refusedAt.
func (l *Locker) try(ctx context.Context, name string, opts dialects.Options, refusedAt *int64) (*lease, error) {
	pfx := l.space.lockPrefix(name)
	start := time.Now()
	ttl := ttlSeconds(opts.AtMost)
	sp, err := l.b.leaseFor(ctx, ttl, start.Add(opts.AtMost-spareSlack))
	if err != nil {
		return nil, err
	}
	until := start.Add(opts.AtMost)
	if e := sp.ends(); e.Before(until) {
		until = e
	}
	key := pfx + leaseHex(sp.id)
	lockedAt := time.Now() // the last instant before the request: it was granted later
	v := value{Owner: opts.Owner, LockedAt: lockedAt.UTC(), Until: until.UTC()}
	resp, err := l.b.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(pfx), "=", 0).WithPrefix()).
		Then(clientv3.OpPut(key, v.encode(), clientv3.WithLease(sp.id))).
		Else(clientv3.OpGet(pfx, clientv3.WithFirstCreate()...)).
		Commit()
	if err != nil {
		// The key may exist or not: revoking the lease removes it if so.
		l.b.revoke(sp.id)
		return nil, fmt.Errorf("acquire %s: %w", keyRef(pfx), err)
	}
	if !resp.Succeeded {
		*refusedAt = resp.Header.Revision
		l.b.keepSpare(sp, ttl)
		held := &dialects.HeldError{Name: name}
		if kvs := resp.Responses[0].GetResponseRange().GetKvs(); len(kvs) > 0 {
			if err := nestedSpaceErr(name, pfx, string(kvs[0].Key)); err != nil {
				return nil, err
			}
			if hv, ok := decodeValue(kvs[0].Value); ok {
				held.Holder, held.Until = hv.Owner, hv.Until
			} else {
				held.Holder = ForeignOwner(clientv3.LeaseID(kvs[0].Lease))
			}
		}
		return nil, held
	}
	l.b.acquired.Add(1)
	s := &lease{
		locker: l, name: name, owner: opts.Owner, key: key, id: sp.id, ttl: ttl,
		token: resp.Header.Revision, atMost: opts.AtMost, atLeast: opts.AtLeast, lockedAt: lockedAt,
		grantedBy: time.Now(), renewed: sp,
	}
	s.Start(until, s.expired)
	return s, nil
}

// spareSlack is how much earlier than at-most from the acquire a spare
// lease may end: the lease's Until says so, and the holder is told then.
const spareSlack = 250 * time.Millisecond

// leaseFor returns a lease of ttl whose server-side end is at least by: a
// spare when one is fresh enough, else one granted now.
func (b *Backend) leaseFor(ctx context.Context, ttl int64, by time.Time) (spare, error) {
	s, ok, stale := b.spares.take(ttl, by)
	for _, old := range stale {
		b.revoke(old.id)
	}
	if ok {
		return s, nil
	}
	sent := time.Now()
	g, err := b.cli.Grant(ctx, ttl)
	if err != nil {
		return spare{}, fmt.Errorf("grant a lease of %ds: %w", ttl, err)
	}
	return spare{id: g.ID, ttl: g.TTL, at: sent}, nil
}

// keepSpare keeps a lease with no key for a later acquire, or revokes it.
func (b *Backend) keepSpare(s spare, ttl int64) {
	b.bgMu.Lock()
	kept := !b.closed && b.spares.put(s, ttl) // Close drains after it sets closed
	b.bgMu.Unlock()
	if !kept {
		b.revoke(s.id)
	}
}

// recycle keeps the lease of a released lock, whose key is gone or bound
// to another lease, as a spare: at once while it was renewed a moment ago
// (within half of spareSlack), else after renewing it in the background.
func (b *Backend) recycle(sp spare, want int64) {
	id := sp.id
	if !sp.ends().Before(time.Now().Add(time.Duration(want)*time.Second - spareSlack/2)) {
		b.keepSpare(sp, want)
		return
	}
	b.background(5*time.Second, func(ctx context.Context) {
		sent := time.Now()
		ttl, err := b.renew.keepAliveOnce(ctx, id)
		if err != nil {
			revokeNow(b.cli, id)
			return
		}
		b.keepSpare(spare{id: id, ttl: ttl, at: sent}, want)
	})
}

// revoke revokes lease id in the background: its key, if any, goes too.
// Close waits for it.
func (b *Backend) revoke(id clientv3.LeaseID) {
	b.bgMu.Lock()
	closed := b.closed
	b.bgMu.Unlock()
	if closed {
		revokeNow(b.cli, id)
		return
	}
	b.background(5*time.Second, func(context.Context) { revokeNow(b.cli, id) })
}

// revokeNow revokes lease id, bounded by two seconds whatever else ends.
func revokeNow(cli *clientv3.Client, id clientv3.LeaseID) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, _ = cli.Revoke(ctx, id)
}

func keyRef(pfx string) string { return fmt.Sprintf("%q", pfx) }

// holderKey reads the key of name with the lowest create revision: the
// holder's, or nil when the lock has no key.
func (l *Locker) holderKey(ctx context.Context, name string) (*keyState, error) {
	pfx := l.space.lockPrefix(name)
	resp, err := l.b.cli.Get(ctx, pfx, clientv3.WithFirstCreate()...)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", keyRef(pfx), err)
	}
	if len(resp.Kvs) == 0 {
		return nil, nil
	}
	kv := resp.Kvs[0]
	if err := nestedSpaceErr(name, pfx, string(kv.Key)); err != nil {
		return nil, err
	}
	k := &keyState{key: string(kv.Key), lease: clientv3.LeaseID(kv.Lease), create: kv.CreateRevision, mod: kv.ModRevision}
	k.value, k.ours = decodeValue(kv.Value)
	return k, nil
}

// nestedSpaceErr is nil when key, the first key found under the prefix
// pfx of the lock name, is one of that lock's own keys; else an ErrInvalid
// saying that keys of a lock space nested under the prefix (a DSN prefix
// named like the lock) are in the way, so that no acquire reports them as
// its holder and no release or force release deletes them.
func nestedSpaceErr(name, pfx, key string) error {
	if !strings.Contains(strings.TrimPrefix(key, pfx), "/") {
		return nil
	}
	return fmt.Errorf("%w: lock %q cannot be used: keys of another lock space lie under its prefix %s (%s): a DSN prefix inside this one is named like the lock; name the lock otherwise or keep the DSN prefixes apart", dialects.ErrInvalid, name, keyRef(pfx), keyRef(key))
}

// keyState is one lock key as read.
type keyState struct {
	key         string
	lease       clientv3.LeaseID
	create, mod int64
	value       value
	ours        bool // a schedlock value
}

// owner is the key's owner: the schedlock owner, or the lease of another
// concurrency.Mutex client.
func (k *keyState) owner() string {
	if k.ours {
		return k.value.Owner
	}
	return ForeignOwner(k.lease)
}

// Inspect implements dialects.TableLocker. etcd keeps nothing of a free
// lock, so a name without a key reads as a free row (found, no owner, no
// lease end). A key whose holder's lease end has passed while the server
// still keeps it (its holder stopped refreshing and died before revoking
// it) reads with the server's lease end, rounded up to the second.
func (l *Locker) Inspect(ctx context.Context, name string) (dialects.Row, bool, error) {
	if err := dialects.CheckName(name); err != nil {
		return dialects.Row{}, false, err
	}
	k, err := l.holderKey(ctx, name)
	if err != nil {
		return dialects.Row{}, false, dialects.Wrap(Name, "inspect", l.b.denied(err))
	}
	now := time.Now().UTC()
	if k == nil {
		return dialects.Row{Name: name, DBNow: now, HostTimes: true}, true, nil
	}
	r, err := l.b.row(ctx, name, k, now)
	if err != nil {
		return dialects.Row{}, false, dialects.Wrap(Name, "inspect", l.b.denied(err))
	}
	r.HasToken = l.schema.TokenCol != ""
	if !r.HasToken {
		r.Token = 0
	}
	return r, true, nil
}

// row is the lock row of k, read at now.
func (b *Backend) row(ctx context.Context, name string, k *keyState, now time.Time) (dialects.Row, error) {
	r := dialects.Row{Name: name, Owner: k.owner(), Token: k.create, HasToken: true, DBNow: now, HostTimes: true}
	if k.ours {
		r.LockedAt, r.Until = k.value.LockedAt.UTC(), k.value.Until.UTC()
		if r.Until.After(now) {
			return r, nil
		}
	}
	end, err := b.serverEnd(ctx, k.lease, now)
	if err != nil {
		return r, err
	}
	r.Until = end
	return r, nil
}

// serverEnd is when the server ends lease, at the latest, read at now: its
// remaining TTL (whole seconds, rounded down by the server) plus one
// second, and at least a second from now for a key that still exists.
func (b *Backend) serverEnd(ctx context.Context, id clientv3.LeaseID, now time.Time) (time.Time, error) {
	ttl, err := b.cli.TimeToLive(ctx, id)
	if err != nil {
		return time.Time{}, fmt.Errorf("read the TTL of lease %x: %w", int64(id), err)
	}
	return now.Add(time.Duration(max(ttl.TTL, 0)+1) * time.Second), nil
}

// Handle implements dialects.TableLocker: a lease of owner's that only
// refreshes and releases the lock's holding key, while owner (and token,
// unless 0) still hold it. Its refresh renews the key's lease by that
// lease's own TTL. Its release keeps the key for the whole opts.AtLeast
// from the moment it read the key: a handle cannot know when the lock
// was granted (etcd has no clock, and the key's locked-at is the
// acquirer's host time before its request), only that it was before.
func (l *Locker) Handle(name, owner string, token int64, opts dialects.Options) (dialects.Lease, error) {
	opts, err := dialects.HandleOptions(name, owner, token, opts)
	if err != nil {
		return nil, err
	}
	return &handle{locker: l, name: name, owner: owner, token: token, atLeast: opts.AtLeast, done: make(chan struct{})}, nil
}

// Expire implements dialects.LeaseLocker: it deletes the holding key of
// name whoever holds it, guarded by the key's revision as read, so a key
// that changed in between is left alone (changed false). A schedlock
// key's etcd lease, which binds that key alone, is revoked too, so that
// its holder's refresh or release reports the lease lost (a key of
// another client, such as etcdctl lock, keeps its lease: its session may
// bind other keys).
func (l *Locker) Expire(ctx context.Context, name string) (bool, error) {
	if err := dialects.CheckName(name); err != nil {
		return false, err
	}
	k, err := l.holderKey(ctx, name)
	if err != nil || k == nil {
		return false, dialects.Wrap(Name, "force release", l.b.denied(err))
	}
	resp, err := l.b.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(k.key), "=", k.mod)).
		Then(clientv3.OpDelete(k.key)).
		Commit()
	if err != nil {
		return false, dialects.Wrap(Name, "force release", l.b.denied(err))
	}
	if resp.Succeeded && k.ours && k.lease != clientv3.NoLease {
		if _, err := l.b.cli.Revoke(ctx, k.lease); err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
			return true, dialects.Wrap(Name, "force release", fmt.Errorf("revoke the holder's lease %x: %w", int64(k.lease), l.b.denied(err)))
		}
	}
	return resp.Succeeded, nil
}

// unavailable reports whether a failed try met an etcd that may serve
// the next one: no leader (an election under way), a leader change, a
// timeout of the server's own, or no endpoint answering. The caller's
// context ending is final.
func unavailable(err error) bool {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	case errors.Is(err, rpctypes.ErrNoLeader), errors.Is(err, rpctypes.ErrLeaderChanged),
		errors.Is(err, rpctypes.ErrTimeout), errors.Is(err, rpctypes.ErrTimeoutDueToLeaderFail),
		errors.Is(err, rpctypes.ErrTimeoutDueToConnectionLost):
		return true
	}
	return status.Code(err) == codes.Unavailable
}
