package kubernetes

import (
	"context"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedlock/schedlock/dialects/benchops"
)

// The raw client-go cycle `schedlock bench` measures the engine against,
// on the backend's own client.
var (
	_ benchops.StoreBaseline = (*Backend)(nil)
	_ benchops.RoundTripper  = (*Backend)(nil)
)

// RoundTripSQL names the round-trip baseline in the report.
func (*Backend) RoundTripSQL() string { return "GET /version" }

// RawStoreOps implements benchops.StoreBaseline: the plainest Get/Update
// lock on Leases, on b's REST client, in b's namespace, under Lease names
// of their own ("schedlock-bench-raw.<name>"). TryLock updates the Lease
// this client wrote last under its resourceVersion (as client-go's
// leader election does on its fast path), else gets it and, when it has
// no holder, updates it (creates it when there is none); Unlock empties
// the holder with one update. No owner check, no expiry, no at-most, no
// token: a floor, not a lock to use.
func (b *Backend) RawStoreOps(context.Context) (benchops.StoreOps, error) {
	if b.cfg.every {
		return benchops.StoreOps{}, errEveryNamespace
	}
	r := &rawOps{api: b.leaseAPI(b.ns), last: map[string]*coordinationv1.Lease{}}
	return benchops.StoreOps{
		RoundTrip: func(ctx context.Context) error { return b.cli.Get().AbsPath("/version").Do(ctx).Error() },
		TryLock:   r.tryLock, Unlock: r.unlock, Close: func() error { return nil },
	}, nil
}

type rawOps struct {
	api  leaseClient
	mu   sync.Mutex
	last map[string]*coordinationv1.Lease
}

func rawName(name string) string {
	n, err := leaseName(name)
	if err != nil {
		n = "x"
	}
	return "schedlock-bench-raw." + n
}

func (r *rawOps) write(ctx context.Context, l *coordinationv1.Lease, holder string) (*coordinationv1.Lease, error) {
	now := metav1.NewMicroTime(time.Now())
	secs := int32(60)
	l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.RenewTime = &holder, &secs, &now
	return r.api.Update(ctx, l, metav1.UpdateOptions{})
}

func (r *rawOps) tryLock(ctx context.Context, name string) (bool, error) {
	lname := rawName(name)
	r.mu.Lock()
	last := r.last[lname]
	r.mu.Unlock()
	if last != nil && (last.Spec.HolderIdentity == nil || *last.Spec.HolderIdentity == "") {
		if out, err := r.write(ctx, last.DeepCopy(), "raw"); err == nil {
			r.keep(out)
			return true, nil
		} else if !apierrors.IsConflict(err) {
			return false, err
		}
	}
	cur, err := r.api.Get(ctx, lname, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		holder := "raw"
		out, err := r.api.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: lname},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder}}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		r.keep(out)
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if cur.Spec.HolderIdentity != nil && *cur.Spec.HolderIdentity != "" {
		r.keep(cur)
		return false, nil
	}
	out, err := r.write(ctx, cur, "raw")
	if apierrors.IsConflict(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	r.keep(out)
	return true, nil
}

func (r *rawOps) unlock(ctx context.Context, name string) error {
	lname := rawName(name)
	r.mu.Lock()
	last := r.last[lname]
	r.mu.Unlock()
	if last == nil {
		return nil
	}
	out, err := r.write(ctx, last.DeepCopy(), "")
	if err != nil {
		return err
	}
	r.keep(out)
	return nil
}

func (r *rawOps) keep(l *coordinationv1.Lease) {
	r.mu.Lock()
	r.last[l.Name] = l
	r.mu.Unlock()
}
