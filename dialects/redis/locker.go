package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/schedlock/schedlock/dialects"
)

// Locker is the lease locker on one key layout. It implements
// dialects.LeaseLocker and TableDropper; it is safe for
// concurrent use and holds no state between calls.
type Locker struct {
	b         *Backend
	layout    layout
	refreshes *refreshQueue
}

var (
	_ dialects.LeaseLocker  = (*Locker)(nil)
	_ dialects.TableDropper = (*Locker)(nil)
)

// explain is the package's explain with the ACL fix of a refused command
// or key written for this backend's user and this layout's keys.
func (l *Locker) explain(err error) error {
	return aclFix(explain(err), l.b.cfg.options().user, l.layout.aclKeys())
}

// Strategy reports StrategyTable: a lease with an owner, a lease end and
// (native layout) a fencing token.
func (l *Locker) Strategy() dialects.Strategy { return dialects.StrategyTable }

// Schema implements dialects.LeaseLocker: the preset's columns, Table the
// key prefix (native) or ShedLock's environment.
func (l *Locker) Schema() dialects.Schema { return l.layout.schema }

// DropTable implements dialects.TableDropper: it deletes every key of the
// layout (locks and, native, their token counters), found by SCAN.
// Live locks under the prefix end as lost for their holders.
func (l *Locker) DropTable(ctx context.Context) error {
	return scanKeys(ctx, l.b.client, l.layout.match(), func(ctx context.Context, keys []string) error {
		// One DEL per key: in a Cluster the keys are in many slots.
		pipe := l.b.client.Pipeline()
		for _, k := range keys {
			pipe.Del(ctx, k)
		}
		_, err := pipe.Exec(ctx)
		return l.explain(err)
	})
}

// scanKeys runs fn on the keys matching pattern, a batch at a time, on
// every master of a Cluster (one batch at a time). SCAN, never KEYS: the
// server serves others between batches.
func scanKeys(ctx context.Context, c goredis.UniversalClient, pattern string, fn func(ctx context.Context, keys []string) error) error {
	if cc, ok := c.(*goredis.ClusterClient); ok {
		var mu sync.Mutex
		one := func(ctx context.Context, keys []string) error {
			mu.Lock()
			defer mu.Unlock()
			return fn(ctx, keys)
		}
		return cc.ForEachMaster(ctx, func(ctx context.Context, n *goredis.Client) error { return scanNode(ctx, n, pattern, one) })
	}
	return scanNode(ctx, c, pattern, fn)
}

func scanNode(ctx context.Context, node goredis.Cmdable, pattern string, fn func(ctx context.Context, keys []string) error) error {
	var cursor uint64
	for {
		keys, next, err := node.Scan(ctx, cursor, pattern, 1000).Result()
		if err != nil {
			return fmt.Errorf("scan %s: %w", pattern, explain(err))
		}
		if len(keys) > 0 {
			if err := fn(ctx, keys); err != nil {
				return err
			}
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}

// Acquire implements dialects.Locker: one script run per try, tried
// again until opts.Wait has passed — while the lock is held, and while
// Redis is unavailable (a cut connection, a server loading its data, a
// failover under way: see unavailable), so a waiting acquire rides out
// what a failover or restart costs. A waiting acquire refused by a
// holder listens for the lock's release (wake.go) and tries again when
// it comes, at the holder's lease end, or after opts.RetryEvery,
// whichever is first.
func (l *Locker) Acquire(ctx context.Context, name string, opts dialects.Options) (dialects.Lease, error) {
	if err := dialects.CheckName(name); err != nil {
		return nil, err
	}
	opts, err := opts.Normalize()
	if err != nil {
		return nil, err
	}
	var watch func(ctx context.Context) (dialects.Wakeup, error)
	if l.b.wake != nil {
		key := l.layout.key(name)
		watch = func(ctx context.Context) (dialects.Wakeup, error) { return l.b.wake.watch(ctx, key) }
	}
	lease, err := dialects.RetryAcquireWoken(ctx, opts, func() (dialects.Lease, error) { return l.try(ctx, name, opts) }, func(err error) bool {
		var down unavailableError
		return errors.As(err, &down)
	}, watch)
	return lease, dialects.Wrap(Name, "acquire", err)
}

// try runs the acquire script once (dialects.Settled: a script sent is
// waited for, and a lock it took as ctx ended is released again).
func (l *Locker) try(ctx context.Context, name string, opts dialects.Options) (dialects.Lease, error) {
	keys := l.layout.lockKeys(name)
	script, value, ident := acquireShedlock, opts.Owner, ""
	if l.layout.native {
		script = acquireNative
		value, ident = newNativeValue(opts.Owner, ms(opts.AtMost))
	}
	start := time.Now()
	res, err := dialects.Settled(ctx, func(ctx context.Context) (any, error) {
		return l.b.runScript(ctx, script, keys, value, ms(opts.AtMost))
	})
	if err != nil {
		if l.b.unavailable(err) {
			return nil, unavailableError{explain(err)}
		}
		return nil, l.explain(err)
	}
	var token, lockedAtMS int64
	switch r := res.(type) {
	case int64: // native: the token
		token = r
	case string: // shedlock: the value written
		lockedAt, _ := parseShedlockValue(r)
		ident, lockedAtMS = r, lockedAt.UnixMilli()
	case []any:
		if len(r) != 2 {
			return nil, fmt.Errorf("unexpected reply of the acquire script: %v", res)
		}
		held := &dialects.HeldError{Name: name, Holder: holderOf(l.layout, asString(r[0]))}
		if pttl := asInt(r[1]); pttl > 0 {
			held.Until = start.Add(time.Duration(pttl) * time.Millisecond).UTC()
		}
		return nil, held
	default:
		return nil, fmt.Errorf("unexpected reply of the acquire script: %v", res)
	}
	// The lock key alone: a refresh in the middle of a Cluster reshard
	// then never meets the two keys in different nodes (TRYAGAIN).
	s := l.newLease(name, keys[:1:1], opts, false, leaseEnd(start, opts.AtMost))
	s.ident, s.token, s.lockedAtMS = ident, token, lockedAtMS
	if err := ctx.Err(); err != nil {
		return nil, s.abandon(ctx, err)
	}
	return s, nil
}

// Handle implements dialects.TableLocker: the lease of a lock owner
// holds, for a guarded Refresh or Release; token 0 (and always on the
// shedlock layout, which has none) skips the token comparison.
func (l *Locker) Handle(name, owner string, token int64, opts dialects.Options) (dialects.Lease, error) {
	opts, err := dialects.HandleOptions(name, owner, token, opts)
	if err != nil {
		return nil, err
	}
	s := l.newLease(name, l.layout.lockKeys(name), opts, true, time.Now().Add(opts.AtMost))
	if l.layout.native {
		s.token = token
	}
	return s, nil
}

// Inspect implements dialects.TableLocker with one script run, the times
// on the server's clock. A name without a key is a free row (found), with
// its last token on the native layout; the one exception is a native
// prefix without any key, which is a *dialects.MissingTableError (so a
// check run that made the prefix removes it again).
func (l *Locker) Inspect(ctx context.Context, name string) (dialects.Row, bool, error) {
	if err := dialects.CheckName(name); err != nil {
		return dialects.Row{}, false, err
	}
	row, exists, err := l.inspectKey(ctx, name)
	if err != nil || exists || !l.layout.native {
		return row, true, err
	}
	last, err := l.b.client.Get(ctx, l.layout.tokenKey(name)).Int64()
	switch {
	case errors.Is(err, goredis.Nil):
		if any, err := l.prefixHasKeys(ctx); err != nil || !any {
			if err == nil {
				err = &dialects.MissingTableError{Table: l.layout.prefix, CreateSQL: "(Redis keys " + l.layout.match() + ", made by the first acquire)"}
			}
			return row, false, err
		}
	case err != nil:
		return row, false, l.explain(err)
	default:
		row.Token, row.HasToken = last, true
	}
	return row, true, nil
}

// prefixHasKeys reports whether any key of the layout exists.
func (l *Locker) prefixHasKeys(ctx context.Context) (bool, error) {
	errFound := errors.New("found")
	err := scanKeys(ctx, l.b.client, l.layout.match(), func(context.Context, []string) error { return errFound })
	if errors.Is(err, errFound) {
		return true, nil
	}
	return false, err
}

// inspectKey reads the lock key of name (and its counter); exists is
// false when it has none (row is then free, DBNow set).
func (l *Locker) inspectKey(ctx context.Context, name string) (row dialects.Row, exists bool, err error) {
	res, err := l.b.runScript(ctx, inspectScript, l.layout.lockKeys(name))
	if err != nil {
		return row, false, l.explain(err)
	}
	r, ok := res.([]any)
	if !ok || len(r) < 2 {
		return row, false, fmt.Errorf("unexpected reply of the inspect script: %v", res)
	}
	return rowOf(l.layout, name, r)
}

// rowOf reads an inspect reply (with the counter's value, native).
func rowOf(l layout, name string, r []any) (dialects.Row, bool, error) {
	now := time.UnixMilli(asInt(r[0])).UTC()
	row := dialects.Row{Name: name, DBNow: now}
	pttl := asInt(r[1])
	if pttl == -2 || len(r) < 4 {
		return row, false, nil
	}
	if pttl >= 0 {
		// A key that still exists is still held, even in the millisecond
		// its expiry names.
		row.Until = time.UnixMilli(max(asInt(r[2]), asInt(r[0])+1)).UTC()
	} else {
		row.Until = dialects.HeldForGood // no expiry
	}
	if l.native {
		v := parseNativeValue(asString(r[3]))
		row.Owner = v.owner
		if !v.spanForm {
			row.Token, row.HasToken, row.LockedAt = v.token, v.ok, v.lockedAt
			return row, true, nil
		}
		if len(r) > 4 && r[4] != nil { // the counter holds the token
			row.Token, row.HasToken = asInt(r[4]), true
		}
		if pttl >= 0 { // locked-at is the expiry less the span
			row.LockedAt = time.UnixMilli(asInt(r[2]) - v.span).UTC()
		}
		return row, true, nil
	}
	row.LockedAt, row.Owner = parseShedlockValue(asString(r[3]))
	return row, true, nil
}

// holderOf is the owner a lock key's value names.
func holderOf(l layout, value string) string {
	if l.native {
		return parseNativeValue(value).owner
	}
	_, owner := parseShedlockValue(value)
	return owner
}

// Expire implements dialects.LeaseLocker: the lock key is deleted
// whoever holds it (an administrator's forced release; the token counter
// stays). It reports whether there was a live lease.
func (l *Locker) Expire(ctx context.Context, name string) (bool, error) {
	if err := dialects.CheckName(name); err != nil {
		return false, err
	}
	n, err := l.b.client.Del(ctx, l.layout.key(name)).Result()
	if err != nil {
		return false, dialects.Wrap(Name, "expire", l.explain(err))
	}
	return n > 0, nil
}

// leaseEnd is when a lease sent at start ends on the host clock: start
// cut to the millisecond (the server counts whole milliseconds from its
// now, which is after start), plus atMost. Never after the key's expiry
// on the server, as long as the two clocks agree.
func leaseEnd(start time.Time, atMost time.Duration) time.Time {
	return start.Truncate(time.Millisecond).Add(atMost)
}

// ms is d in whole milliseconds, at least 1.
func ms(d time.Duration) int64 { return max(d.Milliseconds(), 1) }

func asInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	return 0
}

func asString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return ""
}
