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
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/schedlock/schedlock/dialects"
)

// DefaultServerSelectionTimeout bounds finding a server when the DSN sets
// no serverSelectionTimeoutMS (the driver's own default is 30s).
const DefaultServerSelectionTimeout = 5 * time.Second

// Backend is an open client of a MongoDB deployment (or a server speaking
// its protocol, such as FerretDB). It implements dialects.Backend,
// LockBreaker, Prober, RiskReporter and Pauser.
type Backend struct {
	dialects.LeasePauser // Pause and Resume: a lease on the lock's own item

	cfg    config
	client *mongo.Client
	db     *mongo.Database
	facts  Facts
	info   dialects.Info

	// offset is the server's clock minus this host's (nanoseconds), from
	// the localTime of the last hello (see serverNow).
	offset atomic.Int64

	leases dialects.LeaseSet[*lease] // live leases, ended by Close
}

var (
	_ dialects.Backend      = (*Backend)(nil)
	_ dialects.LockBreaker  = (*Backend)(nil)
	_ dialects.RiskReporter = (*Backend)(nil)
	_ dialects.Prober       = (*Backend)(nil)
	_ dialects.Pauser       = (*Backend)(nil)
)

// Open connects to the deployment conn names and reads the server's
// topology and clock (hello, on the primary) and version (buildInfo). An unreachable server or a
// refused login is a *dialects.UnreachableError; its message never holds
// the password.
func Open(ctx context.Context, conn string) (*Backend, error) {
	cfg, err := parseConfig(conn)
	if err != nil {
		return nil, err
	}
	opts := options.Client().ApplyURI(cfg.uri)
	if err := opts.Validate(); err != nil {
		return nil, dialects.Invalidf("the MongoDB DSN: %s", cfg.redact(err.Error()))
	}
	if opts.ServerSelectionTimeout == nil {
		opts.SetServerSelectionTimeout(DefaultServerSelectionTimeout)
	}
	if opts.AppName == nil {
		opts.SetAppName("schedlock")
	}
	client, err := mongo.Connect(opts)
	if err != nil {
		return nil, dialects.Invalidf("the MongoDB DSN: %s", cfg.redact(err.Error()))
	}
	b := &Backend{cfg: cfg, client: client}
	b.LeasePauser = dialects.LeasePauser{Dialect: Name, Locker: b.LeaseLocker}
	// Lock writes are acknowledged by a majority unless the DSN asks for
	// another write concern (w=…), which detection reports as a risk.
	var dbOpts []options.Lister[options.DatabaseOptions]
	if opts.WriteConcern == nil {
		dbOpts = append(dbOpts, options.Database().SetWriteConcern(writeconcern.Majority()))
	}
	b.db = client.Database(cfg.database, dbOpts...)
	// Detection's first command (hello, on the primary) is the proof that
	// the deployment answers and accepts the login: no ping before it.
	facts, err := b.detect(ctx, opts)
	if err != nil {
		_ = client.Disconnect(context.Background())
		return nil, b.unreachable("detect", err)
	}
	b.facts = facts
	b.info = facts.info()
	return b, nil
}

// unreachable wraps a failed request as a *dialects.UnreachableError with
// the hosts and without the password.
func (b *Backend) unreachable(op string, err error) error {
	return dialects.Unreachable(fmt.Errorf("mongodb %s: %s: %w", b.cfg.where, op, redacted{err, b.cfg}))
}

// redacted is an error whose message has the DSN's password removed.
type redacted struct {
	err error
	cfg config
}

func (r redacted) Error() string { return r.cfg.redact(r.err.Error()) }
func (r redacted) Unwrap() error { return r.err }

// Client is the driver client (for tests and tools).
func (b *Backend) Client() *mongo.Client { return b.client }

// Database is the DSN's database.
func (b *Backend) Database() *mongo.Database { return b.db }

// Facts is what detection read.
func (b *Backend) Facts() Facts { return b.facts }

// Detected implements dialects.Backend.
func (b *Backend) Detected() dialects.Info { return b.info }

// serverNow is the server's clock now, as estimated from the localTime
// of the last hello (Open, Probe): this host's clock plus the offset
// measured then, to within half that round trip and the server's
// millisecond.
func (b *Backend) serverNow() time.Time {
	return time.Now().Add(time.Duration(b.offset.Load())).UTC().Truncate(time.Millisecond)
}

// Locker implements dialects.Backend: the table strategy only.
func (b *Backend) Locker(strategy dialects.Strategy, t dialects.Table) (dialects.Locker, error) {
	return dialects.LeaseOnlyLocker(Name, "MongoDB has no session locks; its locks are leases in a collection (the table strategy)", strategy, t, b.LeaseLocker)
}

// LeaseLocker implements dialects.LockBreaker: the locker on the
// collection t names (see layoutOf).
func (b *Backend) LeaseLocker(t dialects.Table) (dialects.LeaseLocker, error) {
	l, err := b.layoutOf(t)
	if err != nil {
		return nil, err
	}
	return &Locker{b: b, layout: l, coll: b.db.Collection(l.coll)}, nil
}

// Liquibase implements dialects.LockBreaker: MongoDB has no Liquibase
// lock table here.
func (b *Backend) Liquibase(string) (dialects.LiquibaseLock, error) {
	return nil, dialects.Wrap(Name, "liquibase", fmt.Errorf("%w: the Liquibase lock is a SQL table", dialects.ErrUnsupported))
}

// LockAdmin implements dialects.LockBreaker: no session locks.
func (b *Backend) LockAdmin() dialects.LockAdmin { return nil }

// Recommend implements dialects.Backend.
func (b *Backend) Recommend() (dialects.Strategy, string) {
	return dialects.StrategyTable, "MongoDB locks are documents written by one conditional update each (the table strategy)"
}

// Close implements dialects.Backend: live leases end, the client
// disconnects.
func (b *Backend) Close() error {
	if !b.leases.Close(func(l *lease) { l.End(dialects.BackendClosed()) }) {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return b.client.Disconnect(ctx)
}

// endLeases ends this process's live leases of name in coll with err.
func (b *Backend) endLeases(coll, name, owner string, err error) {
	for _, s := range b.leases.Matching(func(s *lease) bool {
		return s.l.layout.coll == coll && s.name == name && (owner == "" || s.owner == owner)
	}) {
		s.End(err)
	}
}

// command runs a database command on the DSN's database and decodes its
// answer.
func (b *Backend) command(ctx context.Context, cmd bson.D) (bson.Raw, error) {
	return b.db.RunCommand(ctx, cmd).Raw()
}

// isUnavailable tells a deployment that is down for now (network,
// server selection, a primary stepping down) from other failures.
func isUnavailable(err error) bool {
	var u *dialects.UnreachableError
	if errors.As(err, &u) {
		return true
	}
	return mongo.IsNetworkError(err) || mongo.IsTimeout(err) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) ||
		errors.Is(err, mongo.ErrClientDisconnected) || isServerSelection(err)
}

// isServerSelection reports a failed server selection (no reachable
// primary).
func isServerSelection(err error) bool {
	var se mongo.ServerError
	if errors.As(err, &se) {
		return se.HasErrorLabel("RetryableWriteError") || se.HasErrorCode(10107) || se.HasErrorCode(13435) || se.HasErrorCode(189) || se.HasErrorCode(91)
	}
	return err != nil && (containsFold(err.Error(), "server selection error") || containsFold(err.Error(), "connection refused"))
}
