package dynamodb

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/schedlock/schedlock/dialects"
)

// Probe implements dialects.Prober: DescribeTable of the DSN's table
// (status, key schema, billing, replicas), DescribeContinuousBackups
// (point-in-time recovery: reported, not a lock risk), a one-item
// strongly consistent Scan to prove listing, and the table's risks. It
// writes nothing.
func (b *Backend) Probe(ctx context.Context, _ dialects.ProbeOptions) (dialects.Capabilities, error) {
	no := func(what string) dialects.Capability { return dialects.CapNo("DynamoDB has no "+what, "") }
	caps := dialects.Capabilities{
		SessionLocks: no("session locks: its locks are items written by conditional updates"),
		SkipLocked:   no("rows to lock"),
		NoWait:       no("rows to lock"),
		Isolation: dialects.CapYes("each lock operation is one conditional write, judged on the item's latest state; every read is strongly consistent (ConsistentRead) — " +
			"an eventually consistent read, DynamoDB's default, may show a released lock as held or a new one as free"),
		KillSessions:      no("sessions that hold locks: an administrator frees a lease by its item, under the owner check or forced"),
		Clock:             dialects.Clock{Server: time.Now().UTC(), Detail: "DynamoDB has no clock a condition can read: lease times are each client's own (as ShedLock's are), so hosts must keep their clocks in sync"},
		MissingPrivileges: []dialects.MissingPrivilege{},
		Recommended: dialects.Recommendation{LockStrategy: dialects.StrategyTable, LockReason: "DynamoDB locks are items written by conditional updates; it has no session locks",
			ClaimReason: "DynamoDB has no task rows to claim: claims need a SQL database"},
	}
	table := b.facts.Table
	d, err := b.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	switch {
	case err == nil:
		b.facts.fromTable(d.Table)
	case isAccessDenied(err):
		caps.MissingPrivileges = append(caps.MissingPrivileges, dialects.MissingPrivilege{Privilege: "dynamodb:DescribeTable on " + table,
			NeededFor: "checking the lock table's key schema and detecting a global table", Grant: iamGrant})
	case ctx.Err() != nil:
		return caps, ctx.Err()
	}
	if b.facts.TableStatus != "missing" {
		pitr, err := b.client.DescribeContinuousBackups(ctx, &dynamodb.DescribeContinuousBackupsInput{TableName: aws.String(table)})
		switch {
		case err == nil && pitr.ContinuousBackupsDescription != nil && pitr.ContinuousBackupsDescription.PointInTimeRecoveryDescription != nil:
			b.facts.PITR = string(pitr.ContinuousBackupsDescription.PointInTimeRecoveryDescription.PointInTimeRecoveryStatus)
		case ctx.Err() != nil:
			return caps, ctx.Err()
		default:
			b.facts.PITR = pitrUnanswered
		}
		_, err = b.client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true), Limit: aws.Int32(1)})
		switch {
		case err == nil:
			caps.LockListing = dialects.CapYes("proved: a strongly consistent Scan of the lock table lists the leases with owner, lease end and token (one Scan per listing, paginated by 1 MB)")
		case isAccessDenied(err):
			p := dialects.MissingPrivilege{Privilege: "dynamodb:Scan on " + table, NeededFor: "listing locks", Grant: iamGrant}
			caps.MissingPrivileges = append(caps.MissingPrivileges, p)
			caps.LockListing = dialects.ListingNeeds(p)
		case ctx.Err() != nil:
			return caps, ctx.Err()
		default:
			caps.LockListing = dialects.CapUnknown("Scan failed: "+b.classify("scan", err).Error(), "")
		}
	} else {
		caps.LockListing = dialects.CapYes("a strongly consistent Scan of the lock table lists the leases (table " + table + " does not exist yet)")
	}
	b.info = b.facts.info()
	caps.Risks = b.Risks()
	return caps, nil
}

// Risks implements dialects.RiskReporter: a global table whose replicas
// resolve concurrent writes by last writer wins; never nil.
func (b *Backend) Risks() []dialects.Risk { return b.facts.risks() }
