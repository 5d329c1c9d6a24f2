package dialects

import (
	"fmt"
)

// The x- options of a DSN that choose how session-lock names become the
// server's locks (see SessionNames), by their names without the prefix.
const (
	// OptionSessionNames is x-session-names: scoped (the default) or raw.
	OptionSessionNames = "session-names"
	// OptionSessionKey is x-session-key: the key derivation of raw names
	// on a database that locks numbers (PostgreSQL).
	OptionSessionKey = "session-key"
)

// Values of x-session-names.
const (
	// SessionNamesScoped is the default: MySQL/MariaDB lock
	// "DATABASE/NAME" (mysql.LockName), PostgreSQL the key of schedlock's
	// SHA-256 mapping, so a name of one database never meets another
	// database's or another program's lock.
	SessionNamesScoped = "scoped"
	// SessionNamesRaw locks exactly what another program locks for the
	// same name: GET_LOCK('NAME') on MySQL/MariaDB; on PostgreSQL the
	// advisory key that SessionNames.Key derives from the name.
	SessionNamesRaw = "raw"
)

// Key derivations of raw session names on a database that locks numbers
// (SessionNames.Key).
const (
	// KeyHashtext is PostgreSQL's hashtext(name): an int4, which
	// pg_advisory_lock(bigint) takes sign-extended to a bigint, as
	// pg_try_advisory_lock(hashtext('NAME')) does.
	KeyHashtext = "hashtext"
	// KeyHashtextExtended is PostgreSQL's hashtextextended(name, 0), a
	// bigint (PostgreSQL 11+).
	KeyHashtextExtended = "hashtextextended"
	// KeySchedlock is schedlock's own mapping (postgres.Key: the first 8
	// bytes of the name's SHA-256), the key scoped names use too.
	KeySchedlock = "schedlock"
	// KeyAsIs takes the name as the key itself, as locks ls shows it: a
	// bigint in decimal on PostgreSQL, the GET_LOCK name on MySQL.
	KeyAsIs = "key"
)

// SessionNames says how the session strategy turns a lock name into the
// lock the server takes. The zero value is the default, scoped names.
type SessionNames struct {
	// Raw takes the name as other programs do (SessionNamesRaw).
	Raw bool
	// Key is the key derivation of a raw name (Key… constants); "" leaves
	// it to the database (MySQL: the name itself; PostgreSQL has no
	// default and refuses raw names without one).
	Key string
}

// SessionKeys are the key derivations SessionNames.Key takes.
func SessionKeys() []string {
	return []string{KeyHashtext, KeyHashtextExtended, KeySchedlock, KeyAsIs}
}

// ParseSessionNames reads the values of x-session-names and x-session-key
// ("" for an option not given). Errors match ErrInvalid and name no
// option: the caller says which it read.
func ParseSessionNames(names, key string) (SessionNames, error) {
	var n SessionNames
	switch names {
	case "", SessionNamesScoped:
	case SessionNamesRaw:
		n.Raw = true
	default:
		return SessionNames{}, invalidf("unknown session names %q: use %s or %s", names, SessionNamesScoped, SessionNamesRaw)
	}
	if key == "" {
		return n, nil
	}
	known := false
	for _, k := range SessionKeys() {
		known = known || k == key
	}
	switch {
	case !known:
		return SessionNames{}, invalidf("unknown session key derivation %q: use %s, %s, %s or %s", key, KeyHashtext, KeyHashtextExtended, KeySchedlock, KeyAsIs)
	case !n.Raw:
		return SessionNames{}, invalidf("a session key derivation (%s) applies to raw session names only", key)
	}
	n.Key = key
	return n, nil
}

// SessionNamesOf reads the session names of a DSN's x- options (keyed
// without the prefix, as Target.Options).
func SessionNamesOf(opts map[string]string) (SessionNames, error) {
	return ParseSessionNames(opts[OptionSessionNames], opts[OptionSessionKey])
}

// CheckSessionNames checks that the backend d can name its session locks
// as n asks; info is nil before the database was detected, so only what
// the backend alone decides is checked then (the server's version later).
// The default names are every backend's. Errors match ErrUnsupported (no
// such names on this backend or server) or ErrInvalid.
func CheckSessionNames(d *Dialect, n SessionNames, info *Info) error {
	switch {
	case n == SessionNames{}:
		return nil
	case d.CheckSessionNames == nil:
		return fmt.Errorf("%w: %s has no raw session names", ErrUnsupported, d.Title)
	}
	return d.CheckSessionNames(n, info)
}

// NameChecker is implemented by SessionOps (and the SessionLocker over
// them) that take fewer names than CheckName does: raw GET_LOCK names of
// at most 64 characters, a raw PostgreSQL key given as a number.
type NameChecker interface {
	// CheckLockName returns an error matching ErrInvalid for a name that
	// cannot be locked.
	CheckLockName(name string) error
}

// CheckLockName checks name against locker's NameChecker: nil when it
// has none or takes the name.
func CheckLockName(locker Locker, name string) error {
	if c, ok := locker.(NameChecker); ok {
		return c.CheckLockName(name)
	}
	return nil
}
