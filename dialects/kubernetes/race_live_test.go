package kubernetes_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/schedlock/schedlock/dialects"
)

// TestLostUpdateRaceEndsLease: another writer takes the Lease over
// (bumping its resourceVersion and naming another holder): the holder's
// next refresh gets 409 Conflict, reads the Lease once and ends the lease
// at once (Done closed when Refresh returns, ErrLeaseLost), and the
// intruder's Lease is left as it wrote it. A write that bumps the
// resourceVersion but keeps the holder (a label) does not end it.
func TestLostUpdateRaceEndsLease(t *testing.T) {
	dsn := liveDSN(t)
	b := open(t, dsn)
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfigOf(t, dsn))
	if err != nil {
		t.Fatal(err)
	}
	cli, err := coordinationv1client.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	leases := cli.Leases(b.Namespace())
	l, err := b.LeaseLocker(dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	name := fmt.Sprintf("race-%d", time.Now().UnixNano())
	s, err := l.Acquire(ctx, name, dialects.Options{Owner: "holder", AtMost: time.Minute})
	if err != nil {
		t.Fatal(err)
	}

	cur, err := leases.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Labels = map[string]string{"team": "ops"}
	if _, err := leases.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Refresh(ctx); err != nil {
		t.Fatalf("refresh after a label was written: %v", err)
	}

	cur, err = leases.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	intruder := "intruder"
	cur.Spec.HolderIdentity = &intruder
	if _, err := leases.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = s.Refresh(ctx)
	if !errors.Is(err, dialects.ErrLeaseLost) {
		t.Fatalf("refresh after another writer took the Lease: %v, want ErrLeaseLost", err)
	}
	select {
	case <-s.Done():
	default:
		t.Fatal("the lease did not end when its refresh found the Lease taken over")
	}
	if err := s.Release(ctx); !errors.Is(err, dialects.ErrLeaseLost) {
		t.Errorf("release of the lost lease: %v, want ErrLeaseLost", err)
	}
	got, err := leases.Get(ctx, name, metav1.GetOptions{})
	if err != nil || got.Spec.HolderIdentity == nil || *got.Spec.HolderIdentity != intruder {
		t.Fatalf("the intruder's Lease was changed: %v %+v", err, got.Spec)
	}
}
