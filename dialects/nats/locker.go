package nats

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/schedlock/schedlock/dialects"
)

// Locker is the lease locker on one bucket. It implements
// dialects.LeaseLocker, TableCreator and TableDropper.
type Locker struct {
	b      *Backend
	bucket string
	schema dialects.Schema
	shed   bool // ShedLock's layout (shedlock.go)

	kvMu sync.Mutex
	ops  ops
}

var (
	_ dialects.LeaseLocker  = (*Locker)(nil)
	_ dialects.TableCreator = (*Locker)(nil)
	_ dialects.TableDropper = (*Locker)(nil)
)

// Strategy reports StrategyTable.
func (l *Locker) Strategy() dialects.Strategy { return dialects.StrategyTable }

// Schema implements dialects.LeaseLocker.
func (l *Locker) Schema() dialects.Schema { return l.schema }

// CreateTable creates the bucket (history 1, no TTL) when it does not exist.
func (l *Locker) CreateTable(ctx context.Context) error {
	_, err := l.b.js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: l.bucket, History: 1})
	if err != nil && !errors.Is(err, jetstream.ErrBucketExists) {
		return dialects.Wrap(Name, "create bucket", fmt.Errorf("bucket %s: %w", l.bucket, err))
	}
	return nil
}

// DropTable deletes the bucket; leases on it end at their next call.
func (l *Locker) DropTable(ctx context.Context) error {
	l.kvMu.Lock()
	l.ops = nil
	l.kvMu.Unlock()
	err := l.b.js.DeleteKeyValue(ctx, l.bucket)
	if err != nil && !errors.Is(err, jetstream.ErrBucketNotFound) {
		return dialects.Wrap(Name, "drop bucket", fmt.Errorf("bucket %s: %w", l.bucket, err))
	}
	return nil
}

// store returns the bucket's operations in the locker's layout, the
// bucket checked once (checkBucket): missing is a
// *dialects.MissingTableError, one whose settings would free held locks
// is refused.
func (l *Locker) store(ctx context.Context) (ops, error) {
	l.kvMu.Lock()
	defer l.kvMu.Unlock()
	if l.ops != nil {
		return l.ops, nil
	}
	stream := l.b.takeStream(l.bucket)
	found, err := stream != nil, error(nil)
	if stream == nil {
		stream, found, err = l.b.bucketStream(ctx, l.bucket)
	}
	if err == nil && !found {
		return nil, &dialects.MissingTableError{Table: l.bucket, CreateSQL: "nats kv add " + l.bucket + " (history 1, no TTL, file storage: the defaults)"}
	}
	if err != nil {
		return nil, err
	}
	if err := checkBucket(l.bucket, stream.CachedInfo()); err != nil {
		return nil, err
	}
	if l.shed {
		l.ops = newShedOps(l.b.js, stream, l.bucket)
		return l.ops, nil
	}
	kv, err := l.b.js.KeyValue(ctx, l.bucket)
	if err != nil {
		return nil, dialects.Unreachable(fmt.Errorf("bucket %s: %w", l.bucket, err))
	}
	l.ops = kvOps{kv}
	return l.ops, nil
}

// key is the key of the lock name in the locker's layout.
func (l *Locker) key(name string) (string, error) {
	if l.shed {
		return shedlockKey(name)
	}
	return keyOf(name), nil
}

// unavailable tells a store that is down for now from other failures.
func unavailable(err error) bool {
	var u *dialects.UnreachableError
	return errors.As(err, &u)
}

// Acquire implements dialects.Locker.
func (l *Locker) Acquire(ctx context.Context, name string, opts dialects.Options) (dialects.Lease, error) {
	if err := dialects.CheckName(name); err != nil {
		return nil, err
	}
	opts, err := opts.Normalize()
	if err != nil {
		return nil, err
	}
	lease, err := dialects.RetryAcquire(ctx, opts, func() (dialects.Lease, error) { return l.try(ctx, name, opts) }, unavailable)
	return lease, dialects.Wrap(Name, "acquire", err)
}

// netErr wraps a failed request as unreachable unless it is a revision
// conflict or a missing key.
func netErr(op string, err error) error {
	if conflict(err) || absent(err) {
		return err
	}
	return dialects.Unreachable(fmt.Errorf("%s: %w", op, err))
}

func (l *Locker) try(ctx context.Context, name string, opts dialects.Options) (dialects.Lease, error) {
	key, err := l.key(name)
	if err != nil {
		return nil, err
	}
	kv, err := l.store(ctx)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	v := value{Owner: opts.Owner, LockedAt: start.UnixMilli(), LeaseMS: opts.AtMost.Milliseconds()}
	rev, err := kv.create(ctx, key, v)
	if conflict(err) {
		cur, gerr := kv.get(ctx, key)
		switch {
		case absent(gerr):
			return nil, &dialects.HeldError{Name: name} // released between the two calls: the next try takes it
		case errors.Is(gerr, errForeign):
			return nil, dialects.Invalidf("%v", gerr)
		case gerr != nil:
			return nil, netErr("read "+key, gerr)
		}
		if cur.until.After(time.Now()) {
			return nil, &dialects.HeldError{Name: name, Holder: cur.v.Owner, Until: cur.until}
		}
		start = time.Now()
		v.LockedAt = start.UnixMilli()
		rev, err = kv.update(ctx, key, v, cur.revision)
		if conflict(err) {
			return nil, &dialects.HeldError{Name: name}
		}
	}
	if err != nil {
		return nil, netErr("create "+key, err)
	}
	s := l.newLease(&lease{name: name, key: key, owner: opts.Owner, token: rev, rev: rev, lockedAt: start,
		atMost: opts.AtMost, atLeast: opts.AtLeast}, start.Add(opts.AtMost))
	if !l.b.leases.Track(s) {
		return nil, fmt.Errorf("%w: the backend is closed", dialects.ErrLeaseLost)
	}
	s.Done() // the timer: the lease ends, and is forgotten, at its end
	return s, nil
}

// Inspect implements dialects.LeaseLocker.
func (l *Locker) Inspect(ctx context.Context, name string) (dialects.Row, bool, error) {
	if err := dialects.CheckName(name); err != nil {
		return dialects.Row{}, false, err
	}
	key, err := l.key(name)
	if err != nil {
		return dialects.Row{}, false, err
	}
	kv, err := l.store(ctx)
	if err != nil {
		return dialects.Row{}, false, err
	}
	cur, err := kv.get(ctx, key)
	if absent(err) {
		return dialects.Row{}, false, nil
	}
	if errors.Is(err, errForeign) {
		return dialects.Row{}, false, dialects.Invalidf("%v", err)
	}
	if err != nil {
		return dialects.Row{}, false, dialects.Wrap(Name, "inspect", netErr("read", err))
	}
	return cur.row(name, time.Now(), false), true, nil
}

// Handle implements dialects.LeaseLocker.
func (l *Locker) Handle(name, owner string, token int64, opts dialects.Options) (dialects.Lease, error) {
	opts, err := dialects.HandleOptions(name, owner, token, opts)
	if err != nil {
		return nil, err
	}
	key, err := l.key(name)
	if err != nil {
		return nil, err
	}
	return l.newLease(&lease{name: name, key: key, owner: owner, token: uint64(token), atMost: opts.AtMost,
		atLeast: opts.AtLeast, handle: true}, time.Time{}), nil
}

// Expire implements dialects.LeaseLocker: it deletes a live lease's key
// under the revision read.
func (l *Locker) Expire(ctx context.Context, name string) (bool, error) {
	if err := dialects.CheckName(name); err != nil {
		return false, err
	}
	key, err := l.key(name)
	if err != nil {
		return false, err
	}
	kv, err := l.store(ctx)
	if err != nil {
		return false, err
	}
	for {
		cur, err := kv.get(ctx, key)
		if absent(err) {
			return false, nil
		}
		if errors.Is(err, errForeign) {
			return false, dialects.Invalidf("%v", err)
		}
		if err != nil {
			return false, dialects.Wrap(Name, "expire", netErr("read", err))
		}
		if !cur.until.After(time.Now()) {
			return false, nil
		}
		err = kv.del(ctx, key, cur.revision)
		if conflict(err) {
			continue // written meanwhile: judge again
		}
		if err != nil {
			return false, dialects.Wrap(Name, "expire", netErr("delete", err))
		}
		for _, s := range l.b.leases.Matching(func(s *lease) bool { return s.l.bucket == l.bucket && s.key == key }) {
			s.End(fmt.Errorf("%w: lock %q was force-released", dialects.ErrLeaseLost, name))
		}
		return true, nil
	}
}
