package mongodb

import (
	"context"
	"errors"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/schedlock/schedlock/dialects"
)

// Probe implements dialects.Prober: the server's clock (hello's
// localTime) against the host's, which also renews the offset the lease
// arithmetic uses; a find on the default collection to prove listing and
// the read privilege; and the deployment's risks. It writes nothing.
func (b *Backend) Probe(ctx context.Context, _ dialects.ProbeOptions) (dialects.Capabilities, error) {
	no := func(what string) dialects.Capability { return dialects.CapNo("MongoDB has no "+what, "") }
	caps := dialects.Capabilities{
		SessionLocks:      no("session locks: its locks are lease documents"),
		SkipLocked:        no("rows to lock"),
		NoWait:            no("rows to lock"),
		Isolation:         dialects.CapYes("each acquire, refresh and release is one single-document conditional update, atomic on the primary"),
		KillSessions:      no("sessions that hold locks: an administrator ends a lease by its document, under the owner check or forced"),
		MissingPrivileges: []dialects.MissingPrivilege{},
		Recommended: dialects.Recommendation{LockStrategy: dialects.StrategyTable, LockReason: "MongoDB keeps leases as documents written by conditional updates; it has no session locks",
			ClaimReason: "MongoDB has no task rows to claim: claims need a SQL database"},
		Risks: b.Risks(),
	}
	before := time.Now()
	h, rtt, err := b.hello(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return caps, ctx.Err()
		}
		caps.Clock = dialects.Clock{Detail: "hello failed: " + b.cfg.redact(err.Error())}
	} else if lt, ok := h.Lookup("localTime").DateTimeOK(); ok {
		mid := before.Add(rtt / 2)
		caps.Clock = dialects.Clock{Server: time.UnixMilli(lt).UTC(), Skew: time.UnixMilli(lt).Sub(mid), RoundTrip: rtt, Measured: true}
	} else {
		caps.Clock = dialects.Clock{Detail: "hello has no localTime: lease ends are judged on this host's clock", RoundTrip: rtt}
	}
	l, _ := b.layoutOf(dialects.Table{})
	err = b.db.Collection(l.coll).FindOne(ctx, bson.D{{Key: fieldName, Value: "schedlock-probe"}}).Err()
	switch {
	case err == nil || errors.Is(err, mongo.ErrNoDocuments):
		caps.LockListing = dialects.CapYes("proved: one find per collection lists the locks with owner, lease end and token")
	case ctx.Err() != nil:
		return caps, ctx.Err()
	case isUnauthorized(err):
		p := dialects.MissingPrivilege{Privilege: "readWrite on database " + b.cfg.database, NeededFor: dialects.NeededForLocks,
			Grant: `db.grantRolesToUser("` + b.cfg.user + `", [{role: "readWrite", db: "` + b.cfg.database + `"}])`}
		caps.MissingPrivileges = append(caps.MissingPrivileges, p)
		caps.LockListing = dialects.ListingNeeds(p)
	default:
		caps.LockListing = dialects.CapUnknown("find failed: "+b.cfg.redact(err.Error()), "")
	}
	return caps, nil
}

// Risks implements dialects.RiskReporter: the deployment's shape and
// concerns as detection read them when the backend opened; never nil.
func (b *Backend) Risks() []dialects.Risk { return b.facts.risks() }
