// Package mongodb is the MongoDB backend: one document per lock in a
// collection, written by one conditional update per operation. It runs on
// MongoDB and on servers that speak its protocol (FerretDB, which the
// tests run; see docs/backends.md for what that cannot prove).
//
// DSNs are the driver's own URIs (go.mongodb.org/mongo-driver/v2):
//
//	mongodb://[user:pass@]host[:27017][,host2...][/DB][?collection=NAME&opts]
//	mongodb+srv://[user:pass@]host[/DB][?opts]
//
// DB defaults to "schedlock"; collection names the native layout's
// collection (default "schedlock") and is removed before the driver sees
// the URI; every other option is the driver's (authSource, replicaSet,
// tls, w, readConcernLevel, serverSelectionTimeoutMS — default 5s here).
// Lock writes use write concern majority unless the DSN sets w.
//
// Layouts (both ShedLock's MongoLockProvider documents, repository
// lukas-krecan/ShedLock, providers/mongo/shedlock-provider-mongo):
//
//	schedlock: {_id: NAME, lockUntil: Date, lockedAt: Date, lockedBy: OWNER, token: Long}
//	shedlock:  {_id: NAME, lockUntil: Date, lockedAt: Date, lockedBy: OWNER}  (collection "shedLock")
//
// A lock name is the _id string as it is: _id values may hold any
// character, "$" and "." included (only field names are restricted), and
// names are always values here, never field names or pipeline
// expressions.
//
// Acquire is one findOneAndUpdate({_id: NAME, lockUntil: {$lte: now}},
// {$set: {lockUntil, lockedAt, lockedBy}, $inc: {token: 1}}, upsert,
// sort {_id: 1}): ShedLock's own acquire plus the token (the sort changes
// no match; see acquireSort). A free or expired document is
// updated; a missing one is inserted; a live one makes the upsert's
// insert fail with duplicate key E11000 (matched by
// mongo.IsDuplicateKeyError, which also matches the command error that
// FerretDB and CosmosDB return): the lock is held. The fencing token is
// the document's counter after the $inc, so it grows on every acquire of
// a name (release keeps the document, so the counter is never reset;
// the shedlock layout has no token). Refresh and release are one
// updateOne each, matching _id, lockedBy, the acquire (token; lockedAt on
// the shedlock layout) and a live lease: refresh sets lockUntil to now
// plus at-most, release to the later of now and lockedAt plus at-least.
// A guarded update that matches nothing costs one find to say why. An
// acquire whose context ends while its update is on the wire waits for
// the answer (dialects.Settled) and releases a lock it took.
//
// Clock: "now" in these statements is the server's clock as estimated
// from the localTime of the last hello (at Open, and at each Probe):
// this host's clock plus the offset measured then, to within half that
// round trip (and the server's millisecond). MongoDB could compute lease
// ends with $$NOW in an update pipeline, but FerretDB 1.24, the server
// the tests run, does not accept update pipelines, and a statement the
// tests cannot run is not shipped. The holder ends its own lease (Done)
// at-most after it sent the acquire, on its own clock.
//
// Lockers never create a collection (an upsert would): a missing one is
// a *dialects.MissingTableError until CreateTable (`--create-table`).
package mongodb

import (
	"context"

	"github.com/xo/dburl"

	"github.com/schedlock/schedlock/dialects"
)

// Name is the backend's registry name and URL scheme.
const Name = "mongodb"

// Product is its Info.Product.
const Product = "mongodb"

func init() {
	dialects.Register(&dialects.Dialect{
		Name:    Name,
		Title:   "MongoDB",
		Support: supportRows,
		Schemes: []dialects.Scheme{{Name: Name, DefaultPort: DefaultPort, URL: &dburl.Scheme{Name: Name, Generator: genURL, Transport: dburl.TransportTCP | dburl.TransportAny,
			Aliases: []string{"mongodb+srv", "mongo"}, Desc: "MongoDB"}}},
		Forms:    "mongodb://, mongodb+srv://",
		Starts:   []string{"mongodb://", "mongodb+srv://"},
		Products: map[string]string{Product: "MongoDB"},
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

// genURL is the dburl generator of MongoDB URLs: the URL itself.
func genURL(u *dburl.URL) (string, string, error) { return u.URL.String(), "", nil }
