package etcd

import (
	"context"

	"github.com/schedlock/schedlock/dialects/benchops"
)

// The raw clientv3 cycle `schedlock bench` measures the engine against
// (RawOps), on the backend's own client.
var (
	_ benchops.StoreBaseline = (*Backend)(nil)
	_ benchops.RoundTripper  = (*Backend)(nil)
)

// RoundTripSQL names the round-trip baseline in the report.
func (*Backend) RoundTripSQL() string { return "linearizable Get" }

// RawStoreOps implements benchops.StoreBaseline with RawOps on b's client;
// the raw locks' lease lasts ten minutes and is revoked by Close.
func (b *Backend) RawStoreOps(ctx context.Context) (benchops.StoreOps, error) {
	raw, err := NewRawOps(ctx, b, 600)
	if err != nil {
		return benchops.StoreOps{}, err
	}
	return benchops.StoreOps{RoundTrip: raw.RoundTrip, TryLock: raw.TryLock, Unlock: raw.Unlock, Close: raw.Close}, nil
}
