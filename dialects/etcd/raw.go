package etcd

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// RawOps are the plainest clientv3 calls a lock cycle can be made of, on
// the backend's own client, for benchmarks beside the engine: TryLock is
// one transaction that puts the lock key, bound to a lease granted once,
// only when the lock has no key (the engine's acquire, less the owner's
// value and the lease per lock); Unlock is one delete; RoundTrip one
// linearizable read. They keep no lease per lock, no owner, no at-most
// and no fencing check, so they are a floor, not a lock to use.
type RawOps struct {
	cli   *clientv3.Client
	root  string
	lease clientv3.LeaseID
}

// NewRawOps grants the one lease of the raw locks (ttlSeconds long) on b.
func NewRawOps(ctx context.Context, b *Backend, ttlSeconds int64) (*RawOps, error) {
	g, err := b.cli.Grant(ctx, ttlSeconds)
	if err != nil {
		return nil, fmt.Errorf("grant the raw locks' lease: %w", err)
	}
	return &RawOps{cli: b.cli, root: b.cfg.root, lease: g.ID}, nil
}

func (r *RawOps) key(name string) (prefix, key string) {
	prefix = r.root + EscapeName(name) + "/"
	return prefix, prefix + leaseHex(r.lease)
}

// RoundTrip is one linearizable read of a key that does not exist.
func (r *RawOps) RoundTrip(ctx context.Context) error {
	_, err := r.cli.Get(ctx, r.root+"\x00schedlock-round-trip")
	return err
}

// TryLock puts name's key when the lock has no key; false when it has.
func (r *RawOps) TryLock(ctx context.Context, name string) (bool, error) {
	pfx, key := r.key(name)
	resp, err := r.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(pfx), "=", 0).WithPrefix()).
		Then(clientv3.OpPut(key, "", clientv3.WithLease(r.lease))).
		Commit()
	if err != nil {
		return false, err
	}
	return resp.Succeeded, nil
}

// Unlock deletes name's key.
func (r *RawOps) Unlock(ctx context.Context, name string) error {
	_, key := r.key(name)
	_, err := r.cli.Delete(ctx, key)
	return err
}

// Close revokes the raw locks' lease (and any key still bound to it).
func (r *RawOps) Close() error {
	_, err := r.cli.Revoke(context.Background(), r.lease)
	return err
}
