// Package kubetest gives tests a client-go LeaderElector, the program the
// Kubernetes backend's Leases interoperate with.
package kubetest

import (
	"context"
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
)

// Elector is a client-go LeaderElector (LeaseLock) on one Lease: lease 4
// s, renew deadline 3 s, retry 250 ms. Started is closed when it first
// leads.
type Elector struct {
	Started chan struct{}

	gets    atomic.Int64
	leading atomic.Bool
	cancel  context.CancelFunc
	done    chan struct{}
}

// StartElector runs an Elector with identity id on Lease ns/name of the
// kubeconfig's cluster until Stop (or the end of tb); release says
// whether it releases the Lease when stopped (ReleaseOnCancel).
func StartElector(tb testing.TB, kubeconfig, ns, name, id string, release bool) *Elector {
	tb.Helper()
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		tb.Fatal(err)
	}
	cli, err := coordinationv1client.NewForConfig(rc)
	if err != nil {
		tb.Fatal(err)
	}
	e := &Elector{Started: make(chan struct{}), done: make(chan struct{})}
	var once sync.Once
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{LeaseMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Client: countingLeases{cli, &e.gets}, LockConfig: resourcelock.ResourceLockConfig{Identity: id}},
		LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 250 * time.Millisecond,
		ReleaseOnCancel: release, Name: name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { e.leading.Store(true); once.Do(func() { close(e.Started) }) },
			OnStoppedLeading: func() { e.leading.Store(false) },
		},
	})
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	go func() { defer close(e.done); le.Run(ctx) }()
	tb.Cleanup(e.Stop)
	return e
}

// Leading reports whether the elector leads now.
func (e *Elector) Leading() bool { return e.leading.Load() }

// Stop ends the elector and waits for it.
func (e *Elector) Stop() { e.cancel(); <-e.done }

// WaitRounds waits until the elector has read the Lease n more times
// (each read is one round of its tryAcquireOrRenew), at most 60 s.
func (e *Elector) WaitRounds(tb testing.TB, n int64) {
	tb.Helper()
	target := e.gets.Load() + n
	deadline := time.Now().Add(60 * time.Second)
	for e.gets.Load() < target {
		if time.Now().After(deadline) {
			tb.Fatalf("the elector read the Lease %d times in 60s, want %d", e.gets.Load(), target)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// countingLeases counts the Lease reads of a LeaderElector.
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
