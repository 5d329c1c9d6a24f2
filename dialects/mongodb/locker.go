package mongodb

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/schedlock/schedlock/dialects"
)

// Locker is the lease locker on one collection. It implements
// dialects.LeaseLocker, TableCreator and TableDropper.
type Locker struct {
	b      *Backend
	layout layout
	coll   *mongo.Collection

	// found is set once the collection was seen to exist: lockers never
	// create it (an upsert would), so the first acquire checks.
	found atomic.Bool
}

var (
	_ dialects.LeaseLocker  = (*Locker)(nil)
	_ dialects.TableCreator = (*Locker)(nil)
	_ dialects.TableDropper = (*Locker)(nil)
)

// Strategy reports StrategyTable.
func (l *Locker) Strategy() dialects.Strategy { return dialects.StrategyTable }

// Schema implements dialects.LeaseLocker.
func (l *Locker) Schema() dialects.Schema { return l.layout.schema }

// CreateTable creates the collection when it does not exist. Lock
// documents need no index beyond _id's.
func (l *Locker) CreateTable(ctx context.Context) error {
	err := l.b.db.CreateCollection(ctx, l.layout.coll)
	var ce mongo.CommandError
	if err != nil && !(errors.As(err, &ce) && (ce.Code == 48 || ce.Name == "NamespaceExists")) {
		return dialects.Wrap(Name, "create collection", l.b.failed("create collection "+l.layout.coll, err))
	}
	return nil
}

// DropTable drops the collection; leases on it end at their next call.
func (l *Locker) DropTable(ctx context.Context) error {
	if err := l.coll.Drop(ctx); err != nil {
		return dialects.Wrap(Name, "drop collection", l.b.failed("drop collection "+l.layout.coll, err))
	}
	return nil
}

// exists reports whether the collection exists (one listCollections).
func (l *Locker) exists(ctx context.Context) (bool, error) {
	names, err := l.b.db.ListCollectionNames(ctx, bson.D{{Key: "name", Value: l.layout.coll}})
	if err != nil {
		return false, l.b.failed("list collections", err)
	}
	return len(names) > 0, nil
}

// ensure checks once that the collection exists.
func (l *Locker) ensure(ctx context.Context) error {
	if l.found.Load() {
		return nil
	}
	ok, err := l.exists(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return l.missing()
	}
	l.found.Store(true)
	return nil
}

// missing is the error of a collection that does not exist.
func (l *Locker) missing() error {
	return &dialects.MissingTableError{Table: l.layout.coll,
		CreateSQL: fmt.Sprintf("db.createCollection(%q)", l.layout.coll)}
}

// failed wraps a failed request: unreachable when the deployment is down
// for now, else the server's error; the password never appears.
func (b *Backend) failed(op string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", op, err)
	}
	if isUnavailable(err) {
		return b.unreachable(op, err)
	}
	if isUnauthorized(err) {
		return &dialects.PrivilegeError{Privilege: "readWrite on database " + b.cfg.database,
			Grant: fmt.Sprintf(`db.grantRolesToUser(%q, [{role: "readWrite", db: %q}])`, b.cfg.user, b.cfg.database), Err: redacted{err, b.cfg}}
	}
	return fmt.Errorf("%s: %w", op, redacted{err, b.cfg})
}

// isUnauthorized reports a refused command (Unauthorized, 13).
func isUnauthorized(err error) bool {
	var se mongo.ServerError
	return errors.As(err, &se) && se.HasErrorCode(13)
}

// Acquire implements dialects.Locker.
func (l *Locker) Acquire(ctx context.Context, name string, opts dialects.Options) (dialects.Lease, error) {
	if err := dialects.CheckName(name); err != nil {
		return nil, err
	}
	opts, err := opts.Normalize()
	if err != nil {
		return nil, err
	}
	lease, err := dialects.RetryAcquire(ctx, opts, func() (dialects.Lease, error) { return l.try(ctx, name, opts) }, isUnavailable)
	return lease, dialects.Wrap(Name, "acquire", err)
}

// acquireFilter matches the document of name whose lease is over at now;
// no match makes the upsert insert, which a live lock's _id refuses
// (E11000). ShedLock's acquire has the same filter.
func acquireFilter(name string, now time.Time) bson.D {
	return bson.D{{Key: fieldName, Value: name}, {Key: fieldUntil, Value: bson.D{{Key: "$lte", Value: now}}}}
}

// acquireSort orders the acquire's matches by _id. The filter names one
// _id, so MongoDB matches the same document (or none) with or without it,
// on the _id index. FerretDB 1.24 over SQLite reads an unsorted match
// lazily and writes while that read is still open; a write with a read
// open lets SQLite checkpoint its write-ahead log only in part, so the log
// is never restarted while updates are the only writes: it grows by every
// update (over 100 MB in a minute of cycles on one name) and every commit
// checkpoints a longer log. A sort makes FerretDB read every match first
// and close the read, and the acquire's write then lets the log restart.
// The engine's own cycles on one name ran 1.63× as fast with it, its log
// staying at SQLite's 1,000-page checkpoint size.
var acquireSort = bson.D{{Key: fieldName, Value: 1}}

// acquireUpdate sets the lease from now; the native layout also
// increments the token ($inc on a missing field starts from 0).
func (l *Locker) acquireUpdate(owner string, now time.Time, atMost time.Duration) bson.D {
	u := bson.D{{Key: "$set", Value: bson.D{{Key: fieldUntil, Value: now.Add(atMost)}, {Key: fieldLockedAt, Value: now}, {Key: fieldOwner, Value: owner}}}}
	if l.layout.token {
		u = append(u, bson.E{Key: "$inc", Value: bson.D{{Key: fieldToken, Value: int64(1)}}})
	}
	return u
}

func (l *Locker) try(ctx context.Context, name string, opts dialects.Options) (dialects.Lease, error) {
	if err := l.ensure(ctx); err != nil {
		return nil, err
	}
	start := time.Now()
	now := l.b.serverNow()
	// No projection: the document is small, and FerretDB refuses one on
	// findAndModify. The sort is by _id, which the filter names: it
	// changes nothing MongoDB matches, and makes FerretDB read every match
	// before it writes (see acquireSort).
	fo := options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.After).SetSort(acquireSort)
	// Settled: an update sent is waited for, so that one that took the
	// lock as ctx ended is released again instead of left until at-most.
	raw, err := dialects.Settled(ctx, func(ctx context.Context) (bson.Raw, error) {
		return l.coll.FindOneAndUpdate(ctx, acquireFilter(name, now), l.acquireUpdate(opts.Owner, now, opts.AtMost), fo).Raw()
	})
	if mongo.IsDuplicateKeyError(err) {
		return nil, &dialects.HeldError{Name: name}
	}
	if err != nil {
		return nil, l.b.failed("acquire", err)
	}
	s := l.newLease(&lease{name: name, owner: opts.Owner, lockedAt: now, atMost: opts.AtMost, atLeast: opts.AtLeast},
		start.Add(opts.AtMost))
	if l.layout.token {
		v, err := raw.LookupErr(fieldToken)
		tok, ok := v.AsInt64OK()
		if err != nil || !ok {
			return nil, fmt.Errorf("the acquire of %q returned no token", name)
		}
		s.token = tok
	}
	if !l.b.leases.Track(s) {
		return nil, fmt.Errorf("%w: the backend is closed", dialects.ErrLeaseLost)
	}
	s.Done() // the timer: the lease ends, and is forgotten, at its end
	if err := ctx.Err(); err != nil {
		s.atLeast = 0 // the job never ran
		return nil, dialects.Abandon(ctx, err, s.Release)
	}
	return s, nil
}

// read is the document of name; found is false when there is none.
func (l *Locker) read(ctx context.Context, name string) (doc, bool, error) {
	raw, err := l.coll.FindOne(ctx, bson.D{{Key: fieldName, Value: name}}).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return doc{}, false, nil
	}
	if err != nil {
		return doc{}, false, l.b.failed("read", err)
	}
	d, ok := decode(raw)
	return d, ok, nil
}

// Inspect implements dialects.LeaseLocker. A missing collection is a
// *dialects.MissingTableError.
func (l *Locker) Inspect(ctx context.Context, name string) (dialects.Row, bool, error) {
	if err := dialects.CheckName(name); err != nil {
		return dialects.Row{}, false, err
	}
	d, found, err := l.read(ctx, name)
	if err != nil {
		return dialects.Row{}, false, dialects.Wrap(Name, "inspect", err)
	}
	if !found {
		ok, err := l.exists(ctx)
		if err != nil {
			return dialects.Row{}, false, dialects.Wrap(Name, "inspect", err)
		}
		if !ok {
			return dialects.Row{}, false, l.missing()
		}
		return dialects.Row{}, false, nil
	}
	return d.row(l.b.serverNow()), true, nil
}

// Handle implements dialects.LeaseLocker.
func (l *Locker) Handle(name, owner string, token int64, opts dialects.Options) (dialects.Lease, error) {
	opts, err := dialects.HandleOptions(name, owner, token, opts)
	if err != nil {
		return nil, err
	}
	return l.newLease(&lease{name: name, owner: owner, token: token, atMost: opts.AtMost,
		atLeast: opts.AtLeast, handle: true}, time.Time{}), nil
}

// Expire implements dialects.LeaseLocker: one update ends a live lease
// (its lease end set to now; owner, locked-at and token kept).
func (l *Locker) Expire(ctx context.Context, name string) (bool, error) {
	if err := dialects.CheckName(name); err != nil {
		return false, err
	}
	now := l.b.serverNow()
	res, err := l.coll.UpdateOne(ctx, bson.D{{Key: fieldName, Value: name}, {Key: fieldUntil, Value: bson.D{{Key: "$gt", Value: now}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: fieldUntil, Value: now}}}})
	if err != nil {
		return false, dialects.Wrap(Name, "expire", l.b.failed("expire", err))
	}
	if res.MatchedCount == 0 {
		return false, nil
	}
	l.b.endLeases(l.layout.coll, name, "", fmt.Errorf("%w: lock %q was force-released", dialects.ErrLeaseLost, name))
	return true, nil
}
