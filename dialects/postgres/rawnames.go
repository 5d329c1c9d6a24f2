package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"

	"github.com/schedlock/schedlock/dialects"
)

// Raw session names (x-session-names=raw) on PostgreSQL: advisory locks
// take numbers, so a raw name's key comes from the derivation the DSN
// names (x-session-key), the one other programs use for the same name:
//   - hashtext: pg_try_advisory_lock(hashtext('NAME')), the int4 hash
//     sign-extended to a bigint (classid 0 or 0xFFFFFFFF in pg_locks);
//   - hashtextextended: hashtextextended('NAME', 0), a bigint (11+);
//   - schedlock: Key(NAME), the key of scoped names too;
//   - key: NAME is the bigint key itself, in decimal.
//
// Advisory locks belong to the current database either way.

var (
	_ dialects.NameChecker = SessionOps{}
)

// keyFuncOf returns the key function of n: Key for scoped names and the
// schedlock derivation, else the raw derivation's. A name that is no
// bigint under dialects.KeyAsIs has key 0; CheckLockName refuses it first.
func keyFuncOf(n dialects.SessionNames) func(name string) int64 {
	if !n.Raw {
		return Key
	}
	switch n.Key {
	case dialects.KeyHashtext:
		return func(name string) int64 { return int64(Hashtext(name)) }
	case dialects.KeyHashtextExtended:
		return HashtextExtended
	case dialects.KeyAsIs:
		return func(name string) int64 {
			k, _ := strconv.ParseInt(name, 10, 64)
			return k
		}
	}
	return Key
}

// key is the advisory key of name under o.Names.
func (o SessionOps) key(name string) int64 { return keyFuncOf(o.Names)(name) }

// key is the advisory key of name under the admin's session names.
func (a *LockAdmin) key(name string) int64 { return keyFuncOf(a.Names)(name) }

// CheckLockName refuses, under dialects.KeyAsIs, a name that is not a
// bigint in decimal; every other derivation takes any name.
func (o SessionOps) CheckLockName(name string) error { return checkKeyName(o.Names, name) }

// checkLockName is CheckLockName under the admin's session names.
func (a *LockAdmin) checkLockName(name string) error { return checkKeyName(a.Names, name) }

func checkKeyName(n dialects.SessionNames, name string) error {
	if !n.Raw || n.Key != dialects.KeyAsIs {
		return nil
	}
	if _, err := strconv.ParseInt(name, 10, 64); err != nil {
		return dialects.Invalidf("advisory key %q is not a bigint in decimal, such as locks ls shows", name)
	}
	return nil
}

// CheckSessionNames is the dialect's dialects.Dialect.CheckSessionNames:
// raw names need a key derivation; hashtextextended needs PostgreSQL 11
// (openGauss, PostgreSQL 9.2 at heart, has none).
func CheckSessionNames(n dialects.SessionNames, info *dialects.Info) error {
	switch {
	case n.Raw && n.Key == "":
		return dialects.Invalidf("PostgreSQL advisory locks take numbers: raw session names need a key derivation (%s, %s, %s or %s)",
			dialects.KeyHashtext, dialects.KeyHashtextExtended, dialects.KeySchedlock, dialects.KeyAsIs)
	case n.Key != dialects.KeyHashtextExtended || info == nil:
		return nil
	case info.Product == dialects.ProductPostgreSQL && !versionAtLeast(info.Version, 11),
		info.Product == dialects.ProductOpenGauss:
		return fmt.Errorf("%w: %s %s has no hashtextextended (PostgreSQL 11+)", dialects.ErrUnsupported, dialects.ProductTitle(info.Product), info.Version)
	}
	return nil
}

// derivationProbes are the texts whose server-side hash a lock connection
// compares with Hashtext and HashtextExtended: every tail length of the
// lookup3 blocks, several blocks, and multi-byte UTF-8.
var derivationProbes = []string{
	"", "a", "ab", "abc", "abcd", "abcde", "abcdef", "abcdefg", "abcdefgh", "abcdefghi",
	"abcdefghij", "abcdefghijk", "abcdefghijkl", "abcdefghijklm", "sched:order_close",
	"Ünïcødé ✓ names, 25+ bytes long", "0123456789012345678901234567890123456789",
}

// derivationCheckSQL counts the probes whose server-side hash (%s, the
// derivation's function) differs from the key computed here.
const derivationCheckSQL = `SELECT count(*) FROM unnest($1::text[], $2::bigint[]) AS t(s, k) WHERE %s <> k`

// checkDerivation proves, once per lock connection, that the server
// derives raw keys as keyFuncOf does (hashtext and hashtextextended are the
// server's; the other derivations need no proof). A server that differs
// (big-endian, a fork with another hash) is refused with an error
// matching dialects.ErrUnsupported, before any lock is taken.
func (o SessionOps) checkDerivation(ctx context.Context, conn *sql.Conn) error {
	var fn string
	switch {
	case !o.Names.Raw:
		return nil
	case o.Names.Key == dialects.KeyHashtext:
		fn = "hashtext(s)::bigint"
	case o.Names.Key == dialects.KeyHashtextExtended:
		fn = "hashtextextended(s, 0)"
	default:
		return nil
	}
	keys := make([]int64, len(derivationProbes))
	for i, p := range derivationProbes {
		keys[i] = o.key(p)
	}
	var differ int64
	if err := conn.QueryRowContext(ctx, fmt.Sprintf(derivationCheckSQL, fn), derivationProbes, keys).Scan(&differ); err != nil {
		return fmt.Errorf("compare the server's %s: %w", o.Names.Key, err)
	}
	if differ > 0 {
		return fmt.Errorf("%w: this server's %s gives other keys than schedlock computes for %d of %d test names, so raw session keys cannot be derived here",
			dialects.ErrUnsupported, o.Names.Key, differ, len(derivationProbes))
	}
	return nil
}
