package etcd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// Probe implements dialects.Prober: what etcd offers for locking, the
// server's minimum lease TTL (proved by granting a one-second lease and
// reading the TTL the server gave it back, then revoking it) and the
// risks of the cluster's shape.
func (b *Backend) Probe(ctx context.Context, _ dialects.ProbeOptions) (dialects.Capabilities, error) {
	no := func(what string) dialects.Capability { return dialects.CapNo("etcd has no "+what, "") }
	if err := b.members(ctx); err != nil && ctx.Err() != nil {
		return dialects.Capabilities{}, dialects.Wrap(Name, "probe", err)
	}
	start := time.Now()
	g, err := b.cli.Grant(ctx, 1)
	took := time.Since(start)
	leaseCap := dialects.CapUnknown(fmt.Sprintf("granting a probe lease failed: %v", err), "")
	if err == nil {
		_, _ = b.cli.Revoke(context.WithoutCancel(ctx), g.ID)
		leaseCap = dialects.CapYes(fmt.Sprintf("proved: leases expire on the server; its minimum lease TTL is %ds, so a shorter at-most is held that long if its holder dies", g.TTL))
	} else if ctx.Err() != nil {
		return dialects.Capabilities{}, dialects.Wrap(Name, "probe", err)
	}
	missing := []dialects.MissingPrivilege{}
	if p, err := b.lockSpaceAccess(ctx); err != nil {
		return dialects.Capabilities{}, err
	} else if p != nil {
		missing = append(missing, *p)
	}
	listing := dialects.CapYes(fmt.Sprintf("every lock key under %s is listed with its holder, lease and token", quotePrefix(b.cfg.root)))
	if len(missing) > 0 {
		listing = dialects.ListingNeeds(missing[0])
	}
	now := time.Now().UTC()
	risks := b.Risks()
	isolation := dialects.CapYes("serializable: transactions are linearizable; " + strings.TrimPrefix(leaseCap.Detail, "proved: "))
	if leaseCap.Status != dialects.StatusYes {
		isolation = dialects.CapYes("serializable: transactions are linearizable")
	}
	rec := dialects.Recommendation{LockStrategy: dialects.StrategyTable, LockReason: "etcd locks are leased keys with a fencing token (the table strategy)",
		ClaimReason: "etcd has no task rows to claim: claims need a SQL database"}
	return dialects.Capabilities{
		SessionLocks:      no("session locks: its locks are leases"),
		SkipLocked:        no("rows to lock"),
		NoWait:            no("rows to lock"),
		Isolation:         isolation,
		LockListing:       listing,
		KillSessions:      dialects.CapNo("a holder is not terminated: its key is deleted under the revision guard, and its lease runs out", ""),
		Clock:             dialects.Clock{Server: now, Measured: false, RoundTrip: took},
		Recommended:       rec,
		MissingPrivileges: missing,
		Risks:             risks,
	}, nil
}

// Risks implements dialects.RiskReporter: what the cluster's shape means
// for its locks (never nil), as far as it is known without a round trip:
// the member count once Probe read the member list. None
// of them hands a lock to two holders: etcd commits every write to a
// quorum's log.
func (b *Backend) Risks() []dialects.Risk {
	out := []dialects.Risk{}
	voters := 0
	b.membersMu.Lock()
	for _, m := range b.facts.Members {
		if !m.Learner {
			voters++
		}
	}
	read := b.membersRead
	b.membersMu.Unlock()
	switch {
	case !read:
	case voters == 1:
		out = append(out, dialects.Risk{ID: "single-member",
			Detail: "a single member: when it stops, no lock can be taken, refreshed or released, and leases held meanwhile are lost (a restarted member extends them)",
			Remedy: "run a cluster of 3 or 5 members for locks that must survive the loss of one"})
	case voters%2 == 0:
		out = append(out, dialects.Risk{ID: "even-members",
			Detail: fmt.Sprintf("%d voting members: an even count tolerates no more failures than %d", voters, voters-1),
			Remedy: "use an odd number of voting members"})
	}
	if b.cfg.root == "" {
		out = append(out, dialects.Risk{ID: "no-prefix",
			Detail: "no key prefix in the DSN: locks are keys at the root of the keyspace, and listing reads every key",
			Remedy: "name a key prefix as the DSN's path, e.g. etcd://host:2379/locks"})
	}
	return out
}
