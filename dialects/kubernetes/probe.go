package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedlock/schedlock/dialects"
)

var (
	_ dialects.Prober       = (*Backend)(nil)
	_ dialects.RiskReporter = (*Backend)(nil)
)

// Probe implements dialects.Prober: the server's version (read at Open),
// whether the account may list the namespace's Leases (one list request,
// limit 1, writing nothing), the client's rate limit and the risks.
func (b *Backend) Probe(ctx context.Context, _ dialects.ProbeOptions) (dialects.Capabilities, error) {
	no := func(what string) dialects.Capability { return dialects.CapNo("Kubernetes has no "+what, "") }
	start := time.Now()
	_, err := b.leaseAPI(b.ns).List(ctx, metav1.ListOptions{Limit: 1})
	took := time.Since(start)
	missing := []dialects.MissingPrivilege{}
	where := "namespace " + b.ns
	if b.cfg.every {
		where = "every namespace"
	}
	listing := dialects.CapYes("every Lease of " + where + " is listed with its holder, controllers' leader elections included")
	if err != nil {
		cerr := b.requestErr("list the Leases of "+where, err)
		var pe *dialects.PrivilegeError
		if !errors.As(cerr, &pe) {
			return dialects.Capabilities{}, dialects.Wrap(Name, "probe", cerr)
		}
		p := dialects.MissingPrivilege{Privilege: pe.Privilege, NeededFor: dialects.NeededForLocks, Grant: pe.Grant}
		missing = append(missing, p)
		listing = dialects.ListingNeeds(p)
	}
	rec := dialects.Recommendation{LockStrategy: dialects.StrategyTable, LockReason: "Kubernetes locks are Leases in client-go's leader-election layout (the table strategy)",
		ClaimReason: "Kubernetes has no task rows to claim: claims need a SQL database"}
	return dialects.Capabilities{
		SessionLocks: no("session locks: its locks are Leases"),
		SkipLocked:   no("rows to lock"),
		NoWait:       no("rows to lock"),
		Isolation: dialects.CapYes(fmt.Sprintf("serializable per Lease: every write is a compare-and-swap on resourceVersion (etcd's revision); client rate limit %s",
			b.rateLimit())),
		LockListing:       listing,
		KillSessions:      dialects.CapNo("a holder is not terminated: its Lease's holder is emptied under its resourceVersion, and its lease runs out", ""),
		Clock:             dialects.Clock{Server: time.Now().UTC(), Measured: false, RoundTrip: took},
		Recommended:       rec,
		MissingPrivileges: missing,
		Risks:             b.Risks(),
	}, nil
}

// rateLimit describes the client's rate limit.
func (b *Backend) rateLimit() string {
	if b.rc.QPS < 0 {
		return "off (qps=-1)"
	}
	return fmt.Sprintf("%g requests/s, bursts of %d", b.rc.QPS, b.rc.Burst)
}

// Risks implements dialects.RiskReporter. None of them hands a lock to
// two holders: the API server writes every Lease through etcd's quorum,
// under resourceVersion checks.
func (b *Backend) Risks() []dialects.Risk {
	out := []dialects.Risk{}
	if b.rc.QPS > 0 && b.rc.QPS < DefaultQPS {
		out = append(out, dialects.Risk{ID: "client-rate-limit",
			Detail: fmt.Sprintf("the client is limited to %s: refreshes of many leases, or a listing, can wait behind each other (client-go's default is 5/s, bursts of 10)", b.rateLimit()),
			Remedy: fmt.Sprintf("raise qps and burst in the DSN (the default is %d and %d)", DefaultQPS, DefaultBurst)})
	}
	if b.cfg.maxSkew > time.Minute {
		out = append(out, dialects.Risk{ID: "max-skew",
			Detail: fmt.Sprintf("max-skew=%s: a Lease whose holder died is taken only that long after its duration by a process that first sees it", b.cfg.maxSkew),
			Remedy: "keep max-skew near the clock skew between the nodes (the default is 10s)"})
	}
	return out
}
