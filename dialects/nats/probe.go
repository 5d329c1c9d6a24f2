package nats

import (
	"context"
	"fmt"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// Probe implements dialects.Prober: JetStream's account (one request),
// the server's clock (the stream info of the DSN's bucket carries it from
// server 2.10), a listing of the DSN's bucket and ShedLock's, and the
// deployment's risks. It writes no key.
func (b *Backend) Probe(ctx context.Context, _ dialects.ProbeOptions) (dialects.Capabilities, error) {
	no := func(what string) dialects.Capability { return dialects.CapNo("NATS has no "+what, "") }
	caps := dialects.Capabilities{
		SessionLocks:      no("session locks: its locks are leases (keys written under revision checks)"),
		SkipLocked:        no("rows to lock"),
		NoWait:            no("rows to lock"),
		Isolation:         dialects.CapYes("serializable per key: every write is guarded by the key's last revision"),
		KillSessions:      no("sessions that hold locks: an administrator frees a lease by deleting its key under the revision read, or forced"),
		MissingPrivileges: []dialects.MissingPrivilege{},
		Recommended: dialects.Recommendation{LockStrategy: dialects.StrategyTable, LockReason: "NATS KV locks are keys written under revision checks (the table strategy)",
			ClaimReason: "NATS has no task rows to claim: claims need a SQL database"},
	}
	if _, err := b.js.AccountInfo(ctx); err != nil {
		if ctx.Err() != nil {
			return caps, ctx.Err()
		}
		return caps, dialects.Wrap(Name, "probe", dialects.Unreachable(fmt.Errorf("JetStream account: %w", err)))
	}
	before := time.Now()
	info, found, err := b.readBucket(ctx, b.cfg.bucket)
	after := time.Now()
	if err != nil {
		return caps, dialects.Wrap(Name, "probe", err)
	}
	switch {
	case found && !info.TimeStamp.IsZero():
		mid := before.Add(after.Sub(before) / 2)
		caps.Clock = dialects.Clock{Server: info.TimeStamp.UTC(), Skew: info.TimeStamp.Sub(mid), RoundTrip: after.Sub(before), Measured: true}
	case found:
		caps.Clock = dialects.Clock{Detail: "nats-server " + b.facts.version + " sends no clock (stream info's timestamp is 2.10 and later): lease ends are judged on this host's clock"}
	default:
		caps.Clock = dialects.Clock{Detail: "the bucket " + b.cfg.bucket + " does not exist yet: the server's clock is read from its stream info"}
	}
	if _, err := b.ListLocks(ctx, dialects.ListOptions{}); err != nil {
		if ctx.Err() != nil {
			return caps, ctx.Err()
		}
		caps.LockListing = dialects.CapUnknown("listing the buckets failed: "+err.Error(), "allow the user the JetStream API (stream info, consumer create and delete) on the lock buckets")
	} else {
		caps.LockListing = dialects.CapYes("proved: one consumer per bucket reads every key's last value (owner, lease end, token)")
	}
	caps.Risks = b.Risks()
	return caps, nil
}
