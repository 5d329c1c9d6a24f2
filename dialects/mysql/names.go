package mysql

import (
	"strings"

	"github.com/schedlock/schedlock/dialects"
)

// Limits on GET_LOCK names: MySQL 5.7+ refuses more than 64 characters
// (error 3057) and MariaDB more than 192 bytes (error 1059, "Identifier name
// is too long"; 64 three-byte characters).
const (
	MaxLockNameRunes = 64
	MaxLockNameBytes = 192
)

// LockName is the GET_LOCK name of the lock called name in database.
//
// GET_LOCK names are server-wide, so the name is scoped to the database the
// DSN names: database, with "\" and "/" escaped by a "\", then "/", then
// name ("jobs/nightly-report"). A DSN without a database gives "/name".
// The scoped name is used as is when it is within both limits; a longer one
// becomes dialects.MapName(scoped, n) for the largest n <= 64 whose result
// fits in 192 bytes: a readable prefix, "#", and 16 hex digits of the
// SHA-256 of the whole scoped name. The mapping is deterministic, so every
// process maps a name to the same lock, and two databases never share one.
//
// Every result holds a "/" or ends in "#" and 16 hex digits, so it never
// equals the GET_LOCK names other tools take: golang-migrate's decimal
// advisory id ("2851680549"), Flyway's "Flyway-<hash>" and Atlas's
// "atlas_migrate_execute" / "atlas_migrate_diff" (goose takes none on
// MySQL).
func LockName(database, name string) string {
	scoped := lockScope(database) + name
	for n := MaxLockNameRunes; ; n-- {
		mapped := dialects.MapName(scoped, n)
		if len(mapped) <= MaxLockNameBytes || n == 17 {
			return mapped
		}
	}
}

// NameFromLock reverses LockName for a GET_LOCK name of database: the lock
// name and true when stored is a name of database that was not shortened
// (names over the limits end in "#" and a hash: only their start is
// known, and it is returned with false). Names of other databases and of
// other tools give "" and false.
func NameFromLock(database, stored string) (string, bool) {
	rest, ok := strings.CutPrefix(stored, lockScope(database))
	if !ok {
		return "", false
	}
	return rest, !looksShortened(stored)
}

// looksShortened reports whether stored ends as dialects.MapName ends a
// name it shortened: "#" and 16 hex digits.
func looksShortened(stored string) bool {
	const tail = 17
	if len(stored) < tail || stored[len(stored)-tail] != '#' {
		return false
	}
	for _, c := range stored[len(stored)-tail+1:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// lockScope is the prefix LockName puts before the lock name.
func lockScope(database string) string {
	return scopeEscaper.Replace(database) + "/"
}

var scopeEscaper = strings.NewReplacer(`\`, `\\`, `/`, `\/`)
