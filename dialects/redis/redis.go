// Package redis is the Redis backend: leases kept as keys with an expiry,
// taken, refreshed and released by one Lua script each (loaded once, run
// with EVALSHA), with the lease arithmetic on the server's clock (TIME
// inside the script, PEXPIRE relative to the server's now) and a fencing
// token that the acquire script writes to a counter key: the counter + 1,
// or the server's TIME in microseconds when that is higher, so tokens keep
// growing when the counter is lost with the server's data.
//
// DSNs (go-redis's universal client underneath):
//
//	redis://[user:pass@]host:6379/DB             one server
//	rediss://[user:pass@]host:6380/DB            one server over TLS
//	redis://[user:pass@]h1:6379,h2:6379,h3:6379  Redis Cluster (several seed hosts)
//	redis://[user:pass@]s1:26379,s2:26379/DB?master=mymaster
//	                                             Sentinel: the hosts are sentinels
//
// `master=` (or go-redis's `master_name=`) selects Sentinel; several hosts
// without it (or `addr=` repeated, go-redis's form) select Cluster. The
// user and password are the server's and, with Sentinel, the sentinels'
// too. rediss:// verifies the server against the system's CAs, or those
// of cacert=FILE, and presents cert=FILE with key=FILE when given (as
// etcds:// does). Other query parameters are go-redis's options (dial_timeout=3s,
// pool_size=10, …). A single host that turns out to be a Cluster node is
// opened as a Cluster client with that node as its seed.
//
// The lease strategy is offered under the name "table" (a key prefix plays
// the table; see Layout): dialects.Table.Preset selects the key layout —
// "schedlock" (native: token, owner, locked-at, lease end) or "shedlock"
// (ShedLock's key `job-lock:<env>:<name>` and value
// `ADDED:<ISO instant>@<owner>`, so schedlock and ShedLock nodes on one
// Redis exclude each other) — and Table.Name the key prefix (native) or
// ShedLock's environment. A namespace is a prefix of the lock name on the
// native layout (P:{NS::NAME}) and ShedLock's environment on its layout
// (job-lock:NS:NAME; see environment.go). There is no session strategy.
package redis

import (
	"context"

	goredis "github.com/redis/go-redis/v9"
	"github.com/xo/dburl"

	"github.com/schedlock/schedlock/dialects"
)

// Name is the backend's registry name and URL scheme.
const Name = "redis"

// Product is its Info.Product.
const Product = "redis"

// schemeTLS is the URL scheme of Redis over TLS.
const schemeTLS = "rediss"

// quietLogger drops go-redis's own log lines: a backend never prints;
// its errors say what went wrong.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

func init() {
	goredis.SetLogger(quietLogger{})
	dialects.Register(&dialects.Dialect{
		Name:    Name,
		Title:   "Redis",
		Support: supportRows,
		// Two-letter aliases of their own, or dburl would give both "re".
		Schemes: []dialects.Scheme{
			{Name: Name, DefaultPort: "6379", URL: &dburl.Scheme{Name: Name, Generator: genURL, Aliases: []string{"rd"}, Desc: "Redis"}},
			{Name: schemeTLS, DefaultPort: "6379", URL: &dburl.Scheme{Name: schemeTLS, Generator: genURL, Aliases: []string{"rt"}, Desc: "Redis"}},
		},
		Forms:    "redis[s]://",
		Starts:   []string{"redis://", "rediss://"},
		Products: map[string]string{Product: "Redis"},
		ConnString: func(u *dburl.URL) (string, error) {
			// Parsed here too, so a bad URL is a bad DSN before any dial.
			conn := connString(u)
			_, err := parseDSN(conn)
			return conn, err
		},
		ConnectHint:    connectHint,
		NamespaceTable: namespaceTable,
		Open: func(ctx context.Context, t dialects.Target) (dialects.Backend, error) {
			return open(ctx, t.Conn, dialects.MaxConnsOf(t.Options))
		},
	})
}

// genURL is the dburl generator: the URL itself, which go-redis parses.
func genURL(u *dburl.URL) (string, string, error) { return connString(u), "", nil }

// connString is the URL as go-redis reads it, with its original scheme.
func connString(u *dburl.URL) string {
	v := u.URL
	if u.OriginalScheme != "" {
		v.Scheme = u.OriginalScheme
	}
	return v.String()
}
