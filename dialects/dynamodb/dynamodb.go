// Package dynamodb is the Amazon DynamoDB backend: one item per lock in a
// table whose only key is the lock name, taken, refreshed and released by
// one conditional request each (UpdateItem with a ConditionExpression).
//
// DSNs (see parseConfig for the options):
//
//	dynamodb://REGION/TABLE                       the SDK's usual credential chain
//	dynamodb://KEY_ID:SECRET@REGION/TABLE         static credentials
//	dynamodb://REGION/TABLE?endpoint=http://127.0.0.1:8000   a local server
//
// The table is TABLE when the lock table is the preset's default, else
// the table name given (x-table); without either it is the preset's own:
// "schedlock", or ShedLock's "Shedlock". A table must exist (CreateTable
// makes it, on demand billing) with the layout's key as its only key
// (HASH, a string); a table with another key schema is refused, naming
// the schema it needs.
//
// Layouts (dialects.Table.Preset):
//
//   - schedlock: key name (S); lock_until, locked_at (ISO-8601 UTC
//     instants with milliseconds, strings), locked_by (S), token (N).
//   - shedlock: ShedLock's DynamoDBLockProvider (shedlock-provider-dynamodb2):
//     key _id (S); lockUntil, lockedAt (the same ISO strings), lockedBy (S);
//     no token.
//
// Acquire is one UpdateItem that sets the lease under the condition
// `attribute_not_exists(lock_until) OR lock_until <= :now` — ShedLock's
// own request on its layout — and, on the native layout, ADD token :1 in
// the same request: the fencing token is that counter, which grows on
// every acquire of the name and is never reset (a release keeps the
// item). Refresh and release are one UpdateItem each, conditioned on the
// owner, the token (the ShedLock layout: the locked-at instant of the
// acquire) and a lease that has not ended; release moves the lease end
// to now, or to locked-at plus at-least while that is ahead. A refused
// condition returns the item as it was (ReturnValuesOnConditionCheckFailure)
// to say why, without another request.
//
// Clock: DynamoDB has no clock a condition can read, so the lease times
// are the client's, as ShedLock's are: a holder writes its own now and
// lease end, and a contender compares the stored end with its own now.
// Clocks that disagree by s move every judgement by s: a contender whose
// clock is s ahead takes a lock s before its holder's lease ends, so
// hosts must keep their clocks in sync (NTP) and at-most must exceed the
// job by far more than the skew. The holder ends its lease (Done) at-most
// after it sent the request, on its own clock; the request writes a lease
// end a tenth of at-most (at most a second) later, so that the holder has
// stopped before a contender of the same clock can take over.
//
// Reads (Inspect, listing, the lookups of a guarded unlock) are strongly
// consistent (ConsistentRead): an eventually consistent read may show a
// released lock as held or a fresh one as free. Conditional writes are
// always judged on the item's latest state.
package dynamodb

import (
	"context"
	"net/url"

	"github.com/xo/dburl"

	"github.com/schedlock/schedlock/dialects"
)

// Name is the backend's registry name and URL scheme.
const Name = "dynamodb"

// Product is its Info.Product.
const Product = "dynamodb"

func init() {
	// dburl knows dynamodb:// for a SQL driver whose URLs need user info
	// and name the endpoint as the host; this backend's URLs name the
	// region and use the SDK's credential chain, so its own entry
	// replaces that one.
	dburl.Unregister(Name)
	dialects.Register(&dialects.Dialect{
		Name:     Name,
		Title:    "DynamoDB",
		Support:  supportRows,
		Schemes:  []dialects.Scheme{{Name: Name, URL: &dburl.Scheme{Name: Name, Generator: genURL, Aliases: []string{"dy", "dyn", "dynamo"}, Desc: "DynamoDB"}}},
		Forms:    "dynamodb://",
		Starts:   []string{"dynamodb://"},
		Products: map[string]string{Product: "DynamoDB"},
		ConnString: func(u *dburl.URL) (string, error) {
			conn := connString(u)
			_, err := parseConfig(conn)
			return conn, err
		},
		Where: func(conn string) string {
			c, err := parseConfig(conn)
			if err != nil {
				return ""
			}
			return c.where()
		},
		Open: func(ctx context.Context, t dialects.Target) (dialects.Backend, error) {
			return Open(ctx, t.Conn)
		},
	})
}

// genURL is the dburl generator of DynamoDB URLs: the URL itself.
func genURL(u *dburl.URL) (string, string, error) { return connString(u), "", nil }

// connString is the URL with the scheme spelt dynamodb (dy://, dyn://
// and dynamo:// are aliases).
func connString(u *dburl.URL) string {
	v := url.URL(u.URL)
	v.Scheme = Name
	return v.String()
}
