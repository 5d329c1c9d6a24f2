// Package etcd is the etcd backend: locks as leased keys in the layout of
// etcd's concurrency.Mutex, so that `etcdctl lock` and schedlock exclude
// each other on the same name.
//
// DSNs (see parseConfig for the options):
//
//	etcd://[user:pass@]host[:2379][,host2[:2379]...][/prefix]
//	etcds://...   over TLS
//
// The lock called NAME is the keys PREFIX/NAME/<lease id in hex> ("/" and
// "%" in NAME written as %2F and %25), each bound to a lease; the key with
// the lowest create revision holds the lock. A DSN without a prefix puts
// the locks at the root of the keyspace. `etcdctl lock PREFIX/NAME` takes
// the same lock (`etcdctl lock NAME` when the DSN has no prefix).
//
// Acquire creates the key in one transaction only if no key of the lock
// exists, bound to a lease whose TTL is at-most (rounded up to whole
// seconds and raised to the server's minimum lease TTL); the fencing token
// is the key's create revision. Refresh is a lease keepalive plus a
// guarded rewrite of the key's value (which records owner, locked-at and
// lease end); release deletes the key only while its create revision is
// the lease's token. A lease whose refresh is overdue ends at at-most on
// the holder's clock: Done closes and the lease is revoked, so the
// holder's child stops before anyone else can take the lock (the server
// keeps the key at least as long). At-least is kept on release by
// rebinding the key to a lease of the time at-least still needs.
//
// Only the table strategy exists (the name etcd's leases are offered
// under); Table.Name other than "schedlock" adds one path segment, and the
// presets without a token column are refused: etcd has one layout.
package etcd

import (
	"context"

	"github.com/xo/dburl"

	"github.com/schedlock/schedlock/dialects"
)

// Name is the backend's registry name and URL scheme.
const Name = "etcd"

// Product is its Info.Product.
const Product = "etcd"

func init() {
	dialects.Register(&dialects.Dialect{
		Name:     Name,
		Title:    "etcd",
		Support:  supportRows,
		Schemes:  []dialects.Scheme{{Name: Name, DefaultPort: DefaultPort, URL: &dburl.Scheme{Name: Name, Generator: genURL, Aliases: []string{"etcds"}, Desc: "etcd"}}},
		Forms:    "etcd[s]://",
		Starts:   []string{"etcd://", "etcds://"},
		Products: map[string]string{Product: "etcd"},
		ConnString: func(u *dburl.URL) (string, error) {
			// Parsed here too, and its TLS files read, so a bad option or
			// an unreadable certificate is a bad DSN before any dial.
			conn := u.URL.String()
			cfg, err := parseConfig(conn)
			if err == nil {
				_, err = cfg.tlsConfig()
			}
			return conn, err
		},
		ConnectHint: connectHint,
		Open: func(ctx context.Context, t dialects.Target) (dialects.Backend, error) {
			return Open(ctx, t.Conn)
		},
	})
}

// genURL is the dburl generator of etcd URLs: the URL itself, which Open
// parses.
func genURL(u *dburl.URL) (string, string, error) { return u.URL.String(), "", nil }
