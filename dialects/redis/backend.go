package redis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	goredis "github.com/redis/go-redis/v9"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/batch"
)

// Backend is one opened Redis deployment (a server, a Sentinel-managed
// master, or a Cluster). It implements dialects.Backend, LockLister,
// LockBreaker, Prober and RiskReporter.
type Backend struct {
	dialects.LeasePauser // Pause and Resume: a lease on the lock's own item

	client goredis.UniversalClient
	cfg    *config
	info   dialects.Info
	facts  *Facts
	// scripts are what the backend knows of its scripts on the server
	// (loaded lazily: runscript.go), and whether the ACL user may run
	// them.
	scripts scriptState
	// wake carries the release notices waiting acquires listen for
	// (wake.go); its connection opens with the first wait.
	wake *waker

	closeOnce sync.Once
	closeErr  error
}

var (
	_ dialects.Backend      = (*Backend)(nil)
	_ dialects.LockLister   = (*Backend)(nil)
	_ dialects.LockBreaker  = (*Backend)(nil)
	_ dialects.Prober       = (*Backend)(nil)
	_ dialects.RiskReporter = (*Backend)(nil)
)

// Open connects to the Redis deployment of the URL dsn (see the package
// doc) and detects it (INFO); the scripts are loaded as they are first
// run (runscript.go). A server that cannot be reached
// or refuses the login is a *dialects.UnreachableError; a read-only
// replica is refused (it cannot hold a lock), with what to connect to
// instead. An ACL user that may not run scripts opens, for detection and
// probes; its lock operations, and the lockers and listings opened after
// one was refused, fail with the missing privilege.
// The client keeps at most dialects.DefaultMaxConns connections (per node
// of a Cluster); a DSN opened through the registry sets another limit with
// x-max-conns.
func Open(ctx context.Context, dsn string) (*Backend, error) {
	return open(ctx, dsn, dialects.DefaultMaxConns)
}

// open is Open with a client pool of at most maxConns connections (per
// node of a Cluster); a smaller pool_size in the DSN stays.
func open(ctx context.Context, dsn string, maxConns int) (*Backend, error) {
	cfg, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	cfg.limitPool(maxConns)
	client := cfg.newClient()
	facts, err := detect(ctx, client, cfg.mode)
	if err == nil && cfg.mode == ModeStandalone && facts.Mode == ModeCluster {
		// A Cluster node named alone: talk to the whole cluster, or
		// every key of another node's slots would answer MOVED.
		_ = client.Close()
		cfg = cfg.asCluster()
		client = cfg.newClient()
		facts, err = detect(ctx, client, cfg.mode)
	}
	if err != nil {
		_ = client.Close()
		if !cfg.usesTLS() && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) {
			err = fmt.Errorf("%w: %w", errNoReply, err)
		}
		return nil, classify(err)
	}
	if facts.Role == "slave" || facts.Role == "replica" {
		_ = client.Close()
		return nil, dialects.Wrap(Name, "open", fmt.Errorf("%w: this Redis server is a read-only replica of %s: connect to the master, or through Sentinel with master=<name>", dialects.ErrUnsupported, facts.MasterAddr))
	}
	b := &Backend{client: client, cfg: cfg, facts: facts, info: facts.info(), wake: newWaker(client, cfg.database())}
	b.LeasePauser = dialects.LeasePauser{Dialect: Name, Locker: b.pauseLocker}
	return b, nil
}

// noScriptingError is the missing privilege of a user whose script load
// Redis refused (NOPERM).
func noScriptingError(user string, err error) error {
	return &dialects.PrivilegeError{Privilege: scriptingPrivilege, Grant: scriptingGrant(user), Err: err}
}

// scriptingPrivilege names the commands every lock operation needs.
const scriptingPrivilege = "the scripting commands SCRIPT LOAD, EVALSHA and EVAL (every lock operation is one script)"

// scriptingGrant is the ACL change that lets user run the lock scripts.
func scriptingGrant(user string) string { return "ACL SETUSER " + aclUserName(user) + " +@scripting" }

// Client is the backend's go-redis client, for tests and tools that need
// the raw commands; the backend owns it.
func (b *Backend) Client() goredis.UniversalClient { return b.client }

// rawClient is a new client of the same deployment with one connection
// (per node), for raw measurements beside the engine's.
func (b *Backend) rawClient() goredis.UniversalClient {
	c := *b.cfg
	switch {
	case c.single != nil:
		o := *c.single
		o.PoolSize, o.MinIdleConns = 1, 0
		c.single = &o
	case c.cluster != nil:
		o := *c.cluster
		o.PoolSize = 1
		c.cluster = &o
	case c.failover != nil:
		o := *c.failover
		o.PoolSize = 1
		c.failover = &o
	}
	return c.newClient()
}

// Facts is what detection found.
func (b *Backend) Facts() Facts { return *b.facts }

// Detected implements dialects.Backend.
func (b *Backend) Detected() dialects.Info { return b.info }

// Locker implements dialects.Backend: the lease strategy, under the name
// table, on the key layout t selects (see TableLocker).
func (b *Backend) Locker(strategy dialects.Strategy, t dialects.Table) (dialects.Locker, error) {
	switch strategy {
	case dialects.StrategyTable:
		return b.LeaseLocker(t)
	case dialects.StrategySession:
		return nil, dialects.Wrap(Name, "session locker", dialects.WithRemedy(
			unsupportedf("Redis has no session locks: a connection's end frees nothing"), dialects.UseTableStrategy))
	}
	return nil, dialects.Invalidf("unknown strategy %q: use session or table", strategy)
}

// LeaseLocker returns the lease locker on the key layout of t: Preset
// schedlock (default) or shedlock; Name the key prefix (schedlock,
// default "schedlock") or ShedLock's environment (default "default").
// A store that evicts keys is refused: an evicted key is a lock given to
// two holders.
func (b *Backend) LeaseLocker(t dialects.Table) (dialects.LeaseLocker, error) {
	l, err := newLayout(t)
	if err != nil {
		return nil, err
	}
	if err := b.scriptsRefused(); err != nil {
		return nil, dialects.Wrap(Name, "table locker", err)
	}
	if r := b.facts.evictionRisk(); r != "" {
		return nil, dialects.Wrap(Name, "table locker", unsupportedf("%s: set maxmemory-policy to noeviction (CONFIG SET maxmemory-policy noeviction) or use another Redis for locks", r))
	}
	lk := &Locker{b: b, layout: l, refreshes: &refreshQueue{}}
	lk.refreshes.q = batch.New(RefreshWindow, lk.sendRefreshes)
	return lk, nil
}

// Recommend implements dialects.Backend.
func (b *Backend) Recommend() (dialects.Strategy, string) {
	return dialects.StrategyTable, "Redis keeps leases as keys with an expiry (the table strategy); it has no session locks"
}

// ReleaseDeletesKey implements dialects.KeyDeleter: a release, a forced
// expiry and a resume delete the lock's key.
func (b *Backend) ReleaseDeletesKey() bool { return true }

// Close implements dialects.Backend.
func (b *Backend) Close() error {
	b.closeOnce.Do(func() {
		if b.wake != nil {
			b.wake.close()
		}
		b.closeErr = b.client.Close()
	})
	return b.closeErr
}

// Liquibase implements dialects.LockBreaker: Redis has no Liquibase table.
func (b *Backend) Liquibase(string) (dialects.LiquibaseLock, error) {
	return nil, unsupportedf("Redis has no Liquibase lock table")
}

// LockAdmin implements dialects.LockBreaker: nil, Redis has no session
// locks.
func (b *Backend) LockAdmin() dialects.LockAdmin { return nil }

// unsupportedf is an error matching dialects.ErrUnsupported.
func unsupportedf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{dialects.ErrUnsupported}, args...)...)
}

var errClosed = errors.New("redis backend closed")
