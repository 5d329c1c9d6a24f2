package kubernetes_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/schedlock/schedlock/dialects"
)

// countingLeases counts the Lease reads of a LeaderElector: each is one
// round of its tryAcquireOrRenew.
type countingLeases struct {
	coordinationv1client.LeasesGetter
	gets *atomic.Int64
}

func (c countingLeases) Leases(ns string) coordinationv1client.LeaseInterface {
	return countingLease{c.LeasesGetter.Leases(ns), c.gets}
}

type countingLease struct {
	coordinationv1client.LeaseInterface
	gets *atomic.Int64
}

func (c countingLease) Get(ctx context.Context, name string, opts metav1.GetOptions) (*coordinationv1.Lease, error) {
	c.gets.Add(1)
	return c.LeaseInterface.Get(ctx, name, opts)
}

// elector is a client-go LeaderElector on Lease ns/name.
type elector struct {
	gets    atomic.Int64
	leading atomic.Bool
	started chan struct{}
	cancel  context.CancelFunc
	done    chan struct{}
}

// startElector runs a client-go LeaderElector (LeaseLock, identity id) on
// the Lease name in the namespace of the kubeconfig behind b's DSN until
// stop; release says whether it releases the Lease when stopped.
func startElector(t *testing.T, kubeconfig, ns, name, id string, release bool) *elector {
	t.Helper()
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cli, err := coordinationv1client.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	e := &elector{started: make(chan struct{}), done: make(chan struct{})}
	var once sync.Once
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{LeaseMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Client: countingLeases{cli, &e.gets}, LockConfig: resourcelock.ResourceLockConfig{Identity: id}},
		LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 250 * time.Millisecond,
		ReleaseOnCancel: release, Name: name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { e.leading.Store(true); once.Do(func() { close(e.started) }) },
			OnStoppedLeading: func() { e.leading.Store(false) },
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	go func() { defer close(e.done); le.Run(ctx) }()
	t.Cleanup(e.stop)
	return e
}

// stop ends the elector and waits for it.
func (e *elector) stop() { e.cancel(); <-e.done }

// waitRounds waits until the elector has read the Lease n more times.
func (e *elector) waitRounds(t *testing.T, n int64) {
	t.Helper()
	target := e.gets.Load() + n
	deadline := time.Now().Add(60 * time.Second)
	for e.gets.Load() < target {
		if time.Now().After(deadline) {
			t.Fatalf("the elector read the Lease %d times in 60s, want %d", e.gets.Load(), target)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestLeaderElectorInterop: a client-go LeaderElector and schedlock on the
// same Lease exclude each other both ways. While schedlock holds, the
// elector does not lead; once schedlock releases, it does, and schedlock
// is refused with the elector named as holder; when the elector releases
// (ReleaseOnCancel), schedlock takes the lock with a larger token; when it
// stops without releasing, schedlock waits for the Lease to expire.
func TestLeaderElectorInterop(t *testing.T) {
	dsn := liveDSN(t)
	b := open(t, dsn)
	kubeconfig := kubeconfigOf(t, dsn)
	l, err := b.LeaseLocker(dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	name := fmt.Sprintf("interop-%d", time.Now().UnixNano())

	s, err := l.Acquire(ctx, name, dialects.Options{Owner: "schedlock-a", AtMost: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	first, _ := s.Token()
	e := startElector(t, kubeconfig, b.Namespace(), name, "elector-1", true)
	e.waitRounds(t, 6)
	if e.leading.Load() {
		t.Fatal("the elector leads while schedlock holds the Lease")
	}
	if err := s.Release(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-e.started:
	case <-time.After(60 * time.Second):
		t.Fatal("the elector did not lead within 60s of schedlock's release")
	}
	_, err = l.Acquire(ctx, name, dialects.Options{Owner: "schedlock-b", AtMost: time.Minute})
	var held *dialects.HeldError
	if !errors.As(err, &held) || held.Holder != "elector-1" {
		t.Fatalf("acquire while the elector leads: got %v, want held by elector-1", err)
	}
	e.stop() // ReleaseOnCancel: the holder is emptied
	s2, err := l.Acquire(ctx, name, dialects.Options{Owner: "schedlock-b", AtMost: time.Minute})
	if err != nil {
		t.Fatalf("acquire after the elector released: %v", err)
	}
	if tok, _ := s2.Token(); tok <= first {
		t.Errorf("token %d after the elector's term, want more than %d", tok, first)
	}
	if err := s2.Release(ctx); err != nil {
		t.Fatal(err)
	}

	// An elector that stops without releasing: its Lease stays valid for
	// its duration, then schedlock takes it.
	e2 := startElector(t, kubeconfig, b.Namespace(), name, "elector-2", false)
	select {
	case <-e2.started:
	case <-time.After(60 * time.Second):
		t.Fatal("the second elector did not lead within 60s")
	}
	e2.stop()
	if _, err := l.Acquire(ctx, name, dialects.Options{Owner: "schedlock-c", AtMost: time.Minute}); !errors.As(err, &held) || held.Holder != "elector-2" {
		t.Fatalf("acquire right after the elector stopped without releasing: got %v, want held by elector-2", err)
	}
	s3, err := l.Acquire(ctx, name, dialects.Options{Owner: "schedlock-c", AtMost: time.Minute, Wait: time.Minute})
	if err != nil {
		t.Fatalf("acquire with a wait after the elector's Lease ran out: %v", err)
	}
	_ = s3.Release(ctx)
}
