package mysql

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// Raw session names (x-session-names=raw): the lock called NAME is
// GET_LOCK('NAME') itself, the lock any other client takes for that name,
// instead of LockName's "DATABASE/NAME". Such names are server-wide (two
// databases on one server share them) and are not shortened: a name over
// MaxLockNameRunes characters or MaxLockNameBytes bytes is refused.

var _ dialects.NameChecker = (*SessionOps)(nil)

// serverName is the GET_LOCK name of the lock called name in database
// under session names n: name itself when raw, else LockName.
func serverName(database string, n dialects.SessionNames, name string) string {
	if n.Raw {
		return name
	}
	return LockName(database, name)
}

// CheckSessionNames is the dialect's dialects.Dialect.CheckSessionNames:
// raw names are GET_LOCK names as they are, so the only key derivation is
// dialects.KeyAsIs (the name is the key); the others are PostgreSQL's.
func CheckSessionNames(n dialects.SessionNames, _ *dialects.Info) error {
	switch n.Key {
	case "", dialects.KeyAsIs:
		return nil
	}
	return fmt.Errorf("%w: MySQL and MariaDB lock the GET_LOCK name itself; the %s key derivation is PostgreSQL's", dialects.ErrUnsupported, n.Key)
}

// CheckLockName refuses, with raw session names, a name GET_LOCK does
// not take: over 64 characters (MySQL 5.7+ answers error 3057) or 192
// bytes (MariaDB, error 1059). Scoped names of any length are mapped.
func (o *SessionOps) CheckLockName(name string) error {
	if !o.Names.Raw {
		return nil
	}
	return checkRawName(name)
}

// checkRawName refuses a GET_LOCK name over the servers' limits.
func checkRawName(name string) error {
	if n := utf8.RuneCountInString(name); n > MaxLockNameRunes || len(name) > MaxLockNameBytes {
		return dialects.Invalidf("raw session names are GET_LOCK names of at most %d characters (%d bytes), and this one has %d (%d bytes)", MaxLockNameRunes, MaxLockNameBytes, n, len(name))
	}
	return nil
}

var _ sqlkit.RawNameFinder = (*LockAdmin)(nil)

// RawSessionLock returns the connection holding GET_LOCK('name') — the
// lock another client takes for name — from IS_USED_LOCK, which answers
// without performance_schema or the metadata_lock_info plugin. With raw
// session names SessionLock looks that lock up already, and a name over
// GET_LOCK's limits cannot be held: both are not found.
func (a *LockAdmin) RawSessionLock(ctx context.Context, name string) (dialects.LockEntry, bool, error) {
	if a.Names.Raw || checkRawName(name) != nil {
		return dialects.LockEntry{}, false, nil
	}
	return a.SessionLockByKey(ctx, name)
}
