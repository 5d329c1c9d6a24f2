package nats

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/schedlock/schedlock/dialects/benchops"
)

// The raw KV cycle `schedlock bench` measures the engine against: the
// textbook lock on a KV bucket — Create to take, Delete with LastRevision
// of that create to release — on the backend's own nats.go client, in
// the DSN's bucket under keys of their own.
var (
	_ benchops.StoreBaseline = (*Backend)(nil)
	_ benchops.RoundTripper  = (*Backend)(nil)
)

// RoundTripSQL names the round trip: a flush (PING/PONG).
func (*Backend) RoundTripSQL() string { return "PING (flush)" }

// RawStoreOps implements benchops.StoreBaseline: kv.Create and
// kv.Delete(LastRevision) on the DSN's bucket, created (history 1) when
// it is missing.
func (b *Backend) RawStoreOps(ctx context.Context) (benchops.StoreOps, error) {
	kv, err := b.js.KeyValue(ctx, b.cfg.bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = b.js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: b.cfg.bucket, History: 1})
	}
	if err != nil {
		return benchops.StoreOps{}, fmt.Errorf("nats: bucket %s: %w", b.cfg.bucket, err)
	}
	var mu sync.Mutex
	revs := map[string]uint64{}
	value := []byte("schedlock-bench-raw")
	key := func(name string) string { return "schedlock-bench-raw_" + keyOf(name) }
	return benchops.StoreOps{
		RoundTrip: func(ctx context.Context) error {
			if _, ok := ctx.Deadline(); !ok { // nats.go's flush needs one
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, b.cfg.dialTimeout)
				defer cancel()
			}
			return b.nc.FlushWithContext(ctx)
		},
		TryLock: func(ctx context.Context, name string) (bool, error) {
			rev, err := kv.Create(ctx, key(name), value)
			if errors.Is(err, jetstream.ErrKeyExists) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
			mu.Lock()
			revs[name] = rev
			mu.Unlock()
			return true, nil
		},
		Unlock: func(ctx context.Context, name string) error {
			mu.Lock()
			rev := revs[name]
			delete(revs, name)
			mu.Unlock()
			return kv.Delete(ctx, key(name), jetstream.LastRevision(rev))
		},
	}, nil
}
