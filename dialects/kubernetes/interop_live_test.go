package kubernetes_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/kubernetes/kubetest"
)

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
	e := kubetest.StartElector(t, kubeconfig, b.Namespace(), name, "elector-1", true)
	e.WaitRounds(t, 6)
	if e.Leading() {
		t.Fatal("the elector leads while schedlock holds the Lease")
	}
	if err := s.Release(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-e.Started:
	case <-time.After(60 * time.Second):
		t.Fatal("the elector did not lead within 60s of schedlock's release")
	}
	_, err = l.Acquire(ctx, name, dialects.Options{Owner: "schedlock-b", AtMost: time.Minute})
	var held *dialects.HeldError
	if !errors.As(err, &held) || held.Holder != "elector-1" {
		t.Fatalf("acquire while the elector leads: got %v, want held by elector-1", err)
	}
	e.Stop() // ReleaseOnCancel: the holder is emptied
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
	e2 := kubetest.StartElector(t, kubeconfig, b.Namespace(), name, "elector-2", false)
	select {
	case <-e2.Started:
	case <-time.After(60 * time.Second):
		t.Fatal("the second elector did not lead within 60s")
	}
	e2.Stop()
	if _, err := l.Acquire(ctx, name, dialects.Options{Owner: "schedlock-c", AtMost: time.Minute}); !errors.As(err, &held) || held.Holder != "elector-2" {
		t.Fatalf("acquire right after the elector stopped without releasing: got %v, want held by elector-2", err)
	}
	s3, err := l.Acquire(ctx, name, dialects.Options{Owner: "schedlock-c", AtMost: time.Minute, Wait: time.Minute})
	if err != nil {
		t.Fatalf("acquire with a wait after the elector's Lease ran out: %v", err)
	}
	_ = s3.Release(ctx)
}
