// Package nats is the NATS JetStream key-value backend: one key per lock
// in a KV bucket, written only under the bucket's revision checks.
//
// DSNs (see parseConfig for the options):
//
//	nats://[user:pass@]host[:4222][,host2[:4222]...][/BUCKET][?creds=FILE]
//	tls://...   the same over TLS (cacert, cert, key, server-name)
//
// The bucket is BUCKET for the default table name ("schedlock"), and the
// table name itself for any other; a bucket must exist (CreateTable
// creates it with history 1 and no TTL) and a bucket whose entries expire
// (a max age) is refused, since it would free a held lock.
//
// A lock name becomes a key by writing every byte outside A-Z, a-z, 0-9,
// "_" and "-" as "=" and two upper-case hex digits ("job.a/b" is
// "job=2Ea=2Fb"): NATS keys forbid most punctuation and empty
// dot-separated tokens, and the mapping is reversible.
//
// The value is JSON: {"owner":…, "locked_at":…, "lease_ms":…, "token":…}.
// Acquire is Create (only if the key is absent or deleted) or, when the
// present lease is over, Update guarded by the revision just read; the
// fencing token is the KV revision of that acquire write (the bucket's
// sequence, so it grows on every acquire in the bucket). Refresh is
// Update guarded by the lease's last revision; release is Delete with
// LastRevision of that revision, or, while at-least has not passed, an
// Update that keeps the key until locked-at plus at-least. Each is one
// round trip; a guard that fails costs one Get to say why.
//
// Clock: a lease ends lease_ms after the server's timestamp of the write
// that set it (entry.Created(), the server's clock); whether that instant
// has passed is judged on the reading host's clock, so skew between the
// server and a contender shifts the judgement by the skew. locked_at is
// the acquiring host's clock. The holder itself ends its lease (Done)
// at-most after it sent the write, on its own clock, which is never later
// than the server's view.
//
// The shedlock preset (x-preset=shedlock) is ShedLock's layout
// (shedlock.go): bucket shedlock-locks, the lock name as the key, the
// lease end as 8 big-endian bytes of epoch milliseconds, schedlock's
// owner, token and lock time in message headers ShedLock ignores.
//
// Listing (list.go) reads a bucket in four requests whatever its size;
// detection (detect.go) reports the fsync, storage, replica, history and
// per-key TTL risks; bench (bench.go) measures the engine beside raw
// Create and Delete(LastRevision) on the same client.
package nats

import (
	"context"

	"github.com/xo/dburl"

	"github.com/schedlock/schedlock/dialects"
)

// Name is the backend's registry name and URL scheme.
const Name = "nats"

// Product is its Info.Product.
const Product = "nats"

func init() {
	dialects.Register(&dialects.Dialect{
		Name:     Name,
		Title:    "NATS JetStream KV",
		Support:  supportRows,
		Schemes:  []dialects.Scheme{{Name: Name, DefaultPort: DefaultPort, URL: &dburl.Scheme{Name: Name, Generator: genURL, Aliases: []string{"tls"}, Desc: "NATS JetStream KV"}}},
		Forms:    "nats://, tls://",
		Starts:   []string{"nats://", "tls://"},
		Products: map[string]string{Product: "NATS JetStream KV"},
		ConnString: func(u *dburl.URL) (string, error) {
			conn := u.URL.String()
			cfg, err := parseConfig(conn)
			if err == nil {
				_, err = cfg.tlsConfig()
			}
			return conn, err
		},
		Open: func(ctx context.Context, t dialects.Target) (dialects.Backend, error) {
			return Open(ctx, t.Conn)
		},
	})
}

// genURL is the dburl generator of NATS URLs: the URL itself.
func genURL(u *dburl.URL) (string, string, error) { return u.URL.String(), "", nil }
