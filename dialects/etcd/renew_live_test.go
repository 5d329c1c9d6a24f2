package etcd

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/schedlock/schedlock/internal/livetest"
)

// openRenewLive opens the live etcd of SCHEDLOCK_TEST_ETCD_DSN, closed
// when t ends.
func openRenewLive(t *testing.T) *Backend {
	t.Helper()
	dsn := livetest.DSN(t, livetest.Etcd)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := Open(ctx, dsn)
	if err != nil {
		t.Fatalf("open %s: %v", dsn, err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// Keep-alives on the shared stream: concurrent ones, several on one
// lease, each answered with the lease's TTL; a revoked lease answers
// ErrLeaseNotFound; a stream that broke is replaced by the next
// keep-alive, and a closed backend's keep-alive fails.
func TestRenewerKeepsLeasesAliveOnOneStream(t *testing.T) {
	b := openRenewLive(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const ttl = 83 // seconds: no other test grants it
	var ids []clientv3.LeaseID
	for range 3 {
		g, err := b.cli.Grant(ctx, ttl)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, g.ID)
		t.Cleanup(func() { revokeNow(b.cli, g.ID) })
	}
	var wg sync.WaitGroup
	errs := make(chan error, 60)
	for i := range 60 {
		wg.Go(func() {
			got, err := b.renew.keepAliveOnce(ctx, ids[i%len(ids)])
			if err == nil && got != ttl {
				err = errors.New("a keep-alive answered a TTL other than the lease's")
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	first, err := b.renew.current(ctx)
	if err != nil {
		t.Fatal(err)
	}

	if _, err := b.cli.Revoke(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := b.renew.keepAliveOnce(ctx, ids[0]); !errors.Is(err, rpctypes.ErrLeaseNotFound) {
		t.Fatalf("keep-alive of a revoked lease: %v, want %v", err, rpctypes.ErrLeaseNotFound)
	}

	first.cancel() // the stream breaks, as when the connection drops
	if got, err := b.renew.keepAliveOnce(ctx, ids[1]); err != nil || got != ttl {
		t.Fatalf("keep-alive after the stream broke: TTL %d, %v", got, err)
	}
	if now, err := b.renew.current(ctx); err != nil || now == first {
		t.Fatalf("the broken stream was not replaced (%v)", err)
	}

	for _, id := range ids[1:] {
		revokeNow(b.cli, id)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.renew.keepAliveOnce(ctx, ids[2]); err == nil {
		t.Fatal("a keep-alive after Close succeeded")
	}
}
