package etcd

import (
	"context"
	"fmt"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/benchkit"
)

func init() { benchkit.Register(Name, benchSupport{}) }

// benchSupport gives `schedlock bench` the raw clientv3 cycle the engine
// competes with (RawOps), on the backend's own client.
type benchSupport struct{}

// RoundTripSQL names the round-trip baseline in the report.
func (benchSupport) RoundTripSQL() string { return "linearizable Get" }

// RawStoreOps implements benchkit.RawStore with RawOps on b's client; the
// raw locks' lease lasts ten minutes and is revoked by Close.
func (benchSupport) RawStoreOps(ctx context.Context, b dialects.Backend) (benchkit.StoreOps, error) {
	eb, ok := b.(*Backend)
	if !ok {
		return benchkit.StoreOps{}, fmt.Errorf("%w: %T is not the etcd backend", dialects.ErrUnsupported, b)
	}
	raw, err := NewRawOps(ctx, eb, 600)
	if err != nil {
		return benchkit.StoreOps{}, err
	}
	return benchkit.StoreOps{RoundTrip: raw.RoundTrip, TryLock: raw.TryLock, Unlock: raw.Unlock, Close: raw.Close}, nil
}
