package redis

import (
	"context"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// Probe implements dialects.Prober: the server clock (TIME) against the
// host's, a SCAN to prove listing, a SCRIPT LOAD to prove the scripting
// commands, and the deployment's risks (eviction, persistence,
// asynchronous replicas). It writes no key.
func (b *Backend) Probe(ctx context.Context, _ dialects.ProbeOptions) (dialects.Capabilities, error) {
	no := func(what string) dialects.Capability { return dialects.CapNo("Redis has no "+what, "") }
	caps := dialects.Capabilities{
		SessionLocks:      no("session locks: leases are keys with an expiry"),
		SkipLocked:        no("rows to lock"),
		NoWait:            no("rows to lock"),
		Isolation:         dialects.CapYes("serializable: each lock operation is one atomic script"),
		KillSessions:      no("sessions that hold locks: an administrator frees a lease by its key, under the owner check or forced"),
		MissingPrivileges: []dialects.MissingPrivilege{},
		Recommended: dialects.Recommendation{LockStrategy: dialects.StrategyTable, LockReason: "Redis keeps leases as keys with an expiry; it has no session locks",
			ClaimReason: "Redis has no task rows to claim: claims need a SQL database"},
		Risks: b.Risks(),
	}
	if err := b.client.Scan(ctx, 0, "schedlock-probe-*", 10).Err(); err != nil {
		caps.LockListing = dialects.CapUnknown("SCAN failed: "+explain(err).Error(), "allow the SCAN command to the Redis user")
	} else {
		caps.LockListing = dialects.CapYes("proved: SCAN by key prefix lists the leases with owner, lease end and token")
	}
	before := time.Now()
	t, err := b.client.Time(ctx).Result()
	after := time.Now()
	if err != nil {
		if ctx.Err() != nil {
			return caps, ctx.Err()
		}
		caps.Clock = dialects.Clock{Detail: "TIME failed: " + explain(err).Error()}
	} else {
		mid := before.Add(after.Sub(before) / 2)
		caps.Clock = dialects.Clock{Server: t.UTC(), Skew: t.Sub(mid), RoundTrip: after.Sub(before), Measured: true}
	}
	// Loading a script proves the scripting commands (a refusal is
	// remembered: scriptsRefused).
	if err := b.loadScripts(ctx, inspectScript); err != nil && ctx.Err() != nil {
		return caps, ctx.Err()
	}
	if b.scriptsRefused() != nil {
		caps.MissingPrivileges = append(caps.MissingPrivileges, dialects.MissingPrivilege{Privilege: scriptingPrivilege,
			NeededFor: dialects.NeededForLocks, Grant: scriptingGrant(b.cfg.options().user)})
	}
	if p, err := b.keyAccess(ctx); err != nil {
		return caps, err
	} else if p != nil {
		caps.MissingPrivileges = append(caps.MissingPrivileges, *p)
	}
	if len(caps.MissingPrivileges) > 0 && caps.LockListing.Status == dialects.StatusYes {
		// SCAN finds the keys, but each is read by a script on the key.
		caps.LockListing = dialects.ListingNeeds(caps.MissingPrivileges[0])
	}
	return caps, nil
}

// Risks implements dialects.RiskReporter: what detection found when the
// backend opened (eviction, persistence, asynchronous replicas), as Probe
// reports them; never nil.
func (b *Backend) Risks() []dialects.Risk {
	if r := b.facts.risks(); r != nil {
		return r
	}
	return []dialects.Risk{}
}

// keyAccess reads (EXISTS) a key of the default native layout: when the
// ACL user's key patterns leave it out, the missing privilege.
func (b *Backend) keyAccess(ctx context.Context) (*dialects.MissingPrivilege, error) {
	l, err := newLayout(dialects.Table{})
	if err != nil {
		return nil, err
	}
	err = b.client.Exists(ctx, l.key("schedlock-probe")).Err()
	if err == nil || !isNoPermission(err) {
		return nil, nil
	}
	pe := aclFix(noPermission(err), b.cfg.options().user, l.aclKeys()).(*dialects.PrivilegeError)
	return &dialects.MissingPrivilege{Privilege: pe.Privilege + " under the default prefix " + l.prefix + ":",
		NeededFor: dialects.NeededForLocks, Grant: pe.Grant}, nil
}
