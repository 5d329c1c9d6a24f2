package etcd

import (
	"context"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/schedlock/schedlock/dialects"
)

// handle is a lease rebuilt from a name and an owner (Locker.Handle): it
// finds the holding key on every call and acts on it only while it is
// still owner's (and token's).
type handle struct {
	locker  *Locker
	name    string
	owner   string
	token   int64
	atLeast time.Duration

	mu       sync.Mutex
	released bool
	until    time.Time
	done     chan struct{}
}

func (h *handle) Name() string  { return h.name }
func (h *handle) Owner() string { return h.owner }
func (h *handle) Token() (int64, bool) {
	if h.locker.schema.TokenCol == "" || h.token == 0 {
		return 0, false
	}
	return h.token, true
}
func (h *handle) Done() <-chan struct{} { return h.done }
func (h *handle) Err() error            { return nil }
func (h *handle) Until() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.until
}

// holding reads the holding key and checks it is this handle's. A key
// kept only for its at-least can be released (an administrator freeing
// it under the owner's guard), not refreshed.
func (h *handle) holding(ctx context.Context, op string) (*keyState, error) {
	if h.released {
		return nil, fmt.Errorf("%w: %s of %q after it was released", dialects.ErrLeaseLost, op, h.name)
	}
	k, err := h.locker.holderKey(ctx, h.name)
	switch {
	case err != nil:
		return nil, err
	case k == nil:
		return nil, fmt.Errorf("%w: %s of %q: the lock is free", dialects.ErrLeaseLost, op, h.name)
	case k.owner() != h.owner:
		return nil, fmt.Errorf("%w: %s of %q: held by %s", dialects.ErrNotOwner, op, h.name, k.owner())
	case h.token != 0 && k.create != h.token:
		return nil, fmt.Errorf("%w: %s of %q: acquired again (token %d, this lease had %d)", dialects.ErrLeaseLost, op, h.name, k.create, h.token)
	case k.ours && k.value.Released && op != "release":
		return nil, fmt.Errorf("%w: %s of %q: it was released and is kept only for its at-least", dialects.ErrLeaseLost, op, h.name)
	}
	return k, nil
}

// Refresh renews the holding key's lease by its own TTL and rewrites its
// lease end, while the key is unchanged since it was read.
func (h *handle) Refresh(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	k, err := h.holding(ctx, "refresh")
	if err != nil {
		return dialects.Wrap(Name, "refresh", err)
	}
	cli := h.locker.b.cli
	sent := time.Now()
	ttl, err := h.locker.b.renew.keepAliveOnce(ctx, k.lease)
	if err != nil {
		return dialects.Wrap(Name, "refresh", fmt.Errorf("%w: keep lease %x alive: %v", dialects.ErrLeaseLost, int64(k.lease), err))
	}
	until := sent.Add(time.Duration(ttl) * time.Second)
	if !k.ours {
		h.until = until
		return nil
	}
	v := k.value
	v.Until = until.UTC()
	resp, err := cli.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(k.key), "=", k.mod)).
		Then(clientv3.OpPut(k.key, v.encode(), clientv3.WithLease(k.lease))).
		Commit()
	if err != nil {
		return dialects.Wrap(Name, "refresh", err)
	}
	if !resp.Succeeded {
		return dialects.Wrap(Name, "refresh", fmt.Errorf("%w: refresh of %q: the key changed while it was refreshed", dialects.ErrLeaseLost, h.name))
	}
	h.until = until
	return nil
}

// Release deletes the holding key while it is unchanged since it was
// read, or, with an at-least, keeps it for the whole at-least from when
// the read's answer arrived (the lock was granted before; how long before
// is not known here). A key its owner released already, kept for its
// at-least, is deleted: that is an owner's early end of it.
func (h *handle) Release(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	k, err := h.holding(ctx, "release")
	if err != nil {
		return dialects.Wrap(Name, "release", err)
	}
	read := time.Now()
	b := h.locker.b
	guard := clientv3.Compare(clientv3.ModRevision(k.key), "=", k.mod)
	keep := time.Time{}
	if k.ours && !k.value.Released && h.atLeast > 0 {
		keep = read.Add(h.atLeast)
	}
	var resp *clientv3.TxnResponse
	var g *clientv3.LeaseGrantResponse
	if time.Until(keep) > 0 {
		g, err = b.cli.Grant(ctx, ttlSeconds(time.Until(keep)))
		if err != nil {
			return dialects.Wrap(Name, "release", err)
		}
		v := k.value
		v.Until, v.Released = keep.UTC(), true
		resp, err = b.cli.Txn(ctx).If(guard).Then(clientv3.OpPut(k.key, v.encode(), clientv3.WithLease(g.ID))).Commit()
	} else {
		resp, err = b.cli.Txn(ctx).If(guard).Then(clientv3.OpDelete(k.key)).Commit()
	}
	if err != nil || !resp.Succeeded {
		if g != nil {
			b.revoke(g.ID)
		}
		if err == nil {
			err = fmt.Errorf("%w: release of %q: the key changed while it was released", dialects.ErrLeaseLost, h.name)
		}
		return dialects.Wrap(Name, "release", err)
	}
	if g != nil {
		b.deleteAt(k.key, k.create, resp.Header.Revision, g.ID, keep)
	}
	if k.ours {
		// The owner's process may still run its lease's timer; the lease
		// itself has no key now and ends at its TTL, or is revoked here.
		b.revoke(k.lease)
	}
	h.released = true
	return nil
}
