package postgres

import (
	"context"
	"database/sql"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// Backend is an opened database of the PostgreSQL wire family: the kit's
// DB and what detection proved beyond its Info. It is its own
// sqlkit.Engine: advisory session locks (sqlkit.SessionEngine), their
// listing and kill (sqlkit.AdminEngine), the lease table and the
// dialect's probe (sqlkit.ProbeEngine).
type Backend struct {
	*sqlkit.DB
	// facts is what detection proved on KingbaseES and openGauss, whose
	// advisory locks are used only when proven (the catalog names found
	// and the two-connection proof); nil on every other product, which
	// uses the PostgreSQL names and is judged from its Info alone.
	facts *serverFacts
}

var (
	_ dialects.Backend     = (*Backend)(nil)
	_ sqlkit.Engine        = (*Backend)(nil)
	_ sqlkit.SessionEngine = (*Backend)(nil)
	_ sqlkit.AdminEngine   = (*Backend)(nil)
	_ sqlkit.ProbeEngine   = (*Backend)(nil)
)

// Open opens the database of t with the pgx driver and detects it (the
// Dialect's Open). A failed connection is an *dialects.UnreachableError
// whose cause is classified as New's are: an *AuthMethodError for a
// password method pgx cannot answer, a *dialects.ConnLimitError for a
// connection limit reached (ClassifyError).
//
// The pool is pgx's stdlib pool on the parsed connection string; its first
// connection is made without a statement (sqlkit.Reach), and a connection
// the pool hands out again is pinged first only when it has been idle for
// over a second since it was made or last handed out (OpenPool).
func Open(ctx context.Context, t dialects.Target) (dialects.Backend, error) {
	cfg, err := pgx.ParseConfig(t.Conn)
	if err != nil {
		return nil, dialects.Unreachable(classifyConnect(err))
	}
	pool := OpenPool(*cfg)
	sqlkit.LimitConns(pool, t.Options)
	if err := sqlkit.Reach(ctx, pool, classifyConnect); err != nil {
		_ = pool.Close()
		return nil, err
	}
	return sqlkit.OpenPool(ctx, pool, t.Options, New)
}

// reuseIdle is how long a pooled connection may have been unused before
// the pool pings it on its way out: pgx's own default.
const reuseIdle = time.Second

// bornKey is where a connection's start time is kept in its CustomData.
const bornKey = "schedlock.born"

// OpenPool opens pgx's database/sql pool on cfg. Like pgx's default it
// pings a connection it hands out again when that connection has been idle
// for over reuseIdle, counting from when it was made as well as from when
// it was last handed out: pgx alone counts only the latter, so it pings a
// connection made a moment ago on its first reuse (detection, then the
// lock connection, would cost a ping each process).
func OpenPool(cfg pgx.ConnConfig) *sql.DB {
	return stdlib.OpenDB(cfg,
		stdlib.OptionAfterConnect(func(_ context.Context, c *pgx.Conn) error {
			c.PgConn().CustomData()[bornKey] = time.Now()
			return nil
		}),
		stdlib.OptionShouldPing(func(_ context.Context, p stdlib.ShouldPingParams) bool {
			if p.IdleDuration <= reuseIdle {
				return false
			}
			born, ok := p.Conn.PgConn().CustomData()[bornKey].(time.Time)
			return !ok || time.Since(born) > reuseIdle
		}))
}

// classifyConnect classifies the error of a failed connection.
func classifyConnect(err error) error { return ClassifyError(explainAuthError(err)) }

// New detects the database behind pool and returns its backend, which
// owns pool (its Close closes it). options are the DSN's x- options (nil
// for none).
//
// Detection is one statement: SELECT version(), parsed by ParseBanner,
// whether a function aurora_version() exists, which marks Aurora
// (Info.Variant "aurora"), and whether the lease table the options name
// exists (sqlkit.SawTable, for the pause check). A server of the family
// that cannot run it (no pg_proc or to_regclass) is detected by SELECT
// version() and, when it says PostgreSQL, SELECT aurora_version(), whose
// server error means "not Aurora".
//
// KingbaseES and openGauss are not taken on trust: on KingbaseES New
// reads the compatibility mode (SHOW database_mode, else
// current_setting('database_mode', true); Info.Mode "pg", "oracle",
// "mysql", …) and probes which catalog names exist (ProbeCatalog:
// pg_locks or sys_locks, pg_terminate_backend or sys_terminate_backend,
// …); on both it proves the advisory lock functions with the
// two-connection probe (sqlkit.ProbeSessionOps: a lock on a random name,
// taken and released, nothing left behind). The backend keeps what it
// proved: the recommendation, the session locker, the listing and kill
// use it.
//
// A login refused because the server wants openGauss's SHA256, MD5_SHA256
// or SM3 password method gives an *AuthMethodError that says how to fix
// it.
func New(ctx context.Context, pool *sql.DB, options map[string]string) (*Backend, error) {
	table := sqlkit.OptionsTable(options)
	info, facts, exists, seen, err := detect(ctx, pool, table)
	if err != nil {
		return nil, err
	}
	b := &Backend{facts: facts}
	b.DB = sqlkit.New(pool, info, options, b)
	if seen {
		b.SawTable(table, exists)
	}
	return b, nil
}

// catalog names the views and functions of b's server: the names
// detection found, else the PostgreSQL names.
func (b *Backend) catalog() Catalog { return catalogOf(b.facts) }

// NewTableLocker implements sqlkit.Engine: the lease-table locker for t,
// with the SQL of NewBuilder(Info). It sends nothing; a missing table
// shows up on first use.
func (b *Backend) NewTableLocker(t dialects.Table) (dialects.TableLocker, error) {
	return newTableLocker(b.SQL, b.Info, t)
}

// RecommendStrategy implements sqlkit.Engine: session (advisory locks) on
// PostgreSQL (including Aurora) and on YugabyteDB 2025.1 or later; on
// KingbaseES and openGauss session only when detection proved the
// advisory locks with the two-connection probe; the lease table
// everywhere else. The reason says why.
func (b *Backend) RecommendStrategy() (dialects.Strategy, string) { return recommend(b.Info, b.facts) }

// NewSessionLocker implements sqlkit.SessionEngine: advisory locks on the
// key of each name (Key, or the derivation n names for raw names), each
// on its own pinned connection (see sqlkit.SessionLocker). It refuses,
// with an error matching dialects.ErrUnsupported, where SessionRefusal
// does (CockroachDB, YugabyteDB before 2025.1), and on KingbaseES and
// openGauss when detection found the lock functions missing or saw them
// fail the two-connection probe. On KingbaseES the locker uses the
// catalog names detection found (pg_ or sys_).
func (b *Backend) NewSessionLocker(n dialects.SessionNames) (dialects.Locker, error) {
	return newSessionLocker(b.SQL, b.Info, b.facts, n)
}

// NewLockAdmin implements sqlkit.AdminEngine: the LockAdmin on b's pool,
// in the catalog detection found, naming session locks as n asks.
func (b *Backend) NewLockAdmin(n dialects.SessionNames) dialects.LockAdmin {
	c := b.catalog()
	return &LockAdmin{DB: b.SQL, Catalog: &c, Names: n}
}

// ProbeDialect implements sqlkit.ProbeEngine (see probe).
func (b *Backend) ProbeDialect(ctx context.Context, opts dialects.ProbeOptions) (dialects.Capabilities, error) {
	return probe(ctx, b.SQL, b.Info, b.catalog(), opts)
}
