// Package kubernetes is the Kubernetes backend: a lock is a
// coordination.k8s.io/v1 Lease, written in the layout of client-go's
// leader election (tools/leaderelection/resourcelock.LeaseLock), so that a
// client-go LeaderElector and schedlock exclude each other on the same
// Lease.
//
// DSNs (see parseConfig for the options):
//
//	k8s://[NAMESPACE][?kubeconfig=FILE&context=NAME&qps=50&burst=100]
//	kubernetes://...   the same
//
// Credentials come from the kubeconfig (the file named, else $KUBECONFIG
// or ~/.kube/config) or, inside a pod, from its service account; the DSN
// holds none. The namespace is the DSN's, else the context's (or the
// pod's), else "default". A table name other than "schedlock" names
// another namespace.
//
// The Lease of a lock is named after it (leaseName): a name that is a
// valid object name already is used as it is, any other is escaped
// reversibly under the prefix "x-". Its spec is the leader-election
// record: holderIdentity (the owner), leaseDurationSeconds (at-most,
// rounded up to whole seconds), acquireTime, renewTime and
// leaseTransitions, which grows by one on every acquire and is the
// fencing token (a Lease schedlock creates starts at 1). Every write is
// an update under the resourceVersion last read (the API server's
// compare-and-swap); a write that loses the race gets 409 Conflict.
//
// Requests: acquire reads the Lease and updates it (two requests; a Lease
// that does not exist is created instead of updated), but a Lease this
// process saw last is updated directly under the resourceVersion it saw
// (one request; a conflict falls back to read and update). Refresh and
// release are one update each; a conflict costs one read to tell a lease
// that is still ours (a handle of the same owner wrote it) from a lost
// one, which ends at once. Release empties holderIdentity as client-go's
// release does, keeping the Lease and its leaseTransitions; while at-least
// has not passed it instead renews the Lease for the time at-least still
// needs.
//
// Clock: as in client-go (tools/leaderelection/leaderelection.go,
// isLeaseValid), a Lease held by someone else is expired once this
// process has seen it unchanged (the same resourceVersion) for its
// leaseDurationSeconds, on this host's clock, so skew between hosts does
// not matter. A process that has not watched it that long (a one-shot
// `schedlock run`) also takes it as expired when its renewTime plus its
// duration plus max-skew (default 10s) has passed on this host's clock:
// the one judgement that trusts another host's clock, to within max-skew.
// The holder ends its own lease (Done) at-most after it sent its last
// write, on its own clock, before any observer can take it.
package kubernetes

import (
	"context"

	"github.com/xo/dburl"

	"github.com/schedlock/schedlock/dialects"
)

// Name is the backend's registry name and URL scheme.
const Name = "kubernetes"

// Product is its Info.Product.
const Product = "kubernetes"

func init() {
	dialects.Register(&dialects.Dialect{
		Name:    Name,
		Title:   "Kubernetes Lease",
		Support: supportRows,
		// dburl knows the scheme: k8s://, with the aliases kubernetes://,
		// kube://, kc://, k8:// and k://.
		Schemes:  []dialects.Scheme{{Name: "k8s"}},
		Forms:    "k8s://",
		Starts:   []string{"k8s://", "kubernetes://"},
		Products: map[string]string{Product: "Kubernetes Lease"},
		ConnString: func(u *dburl.URL) (string, error) {
			conn := u.URL.String()
			_, err := parseConfig(conn)
			return conn, err
		},
		Open: func(ctx context.Context, t dialects.Target) (dialects.Backend, error) {
			return Open(ctx, t.Conn)
		},
	})
}
