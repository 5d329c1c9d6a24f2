package mysql

import "github.com/schedlock/schedlock/dialects"

// Limits on GET_LOCK names: MySQL 5.7+ refuses more than 64 characters
// (error 3057) and MariaDB more than 192 bytes (error 1059, "Identifier name
// is too long"; 64 three-byte characters).
const (
	MaxLockNameRunes = 64
	MaxLockNameBytes = 192
)

// LockName is the GET_LOCK name used for the lock called name. A name within
// both limits is used as is; a longer one becomes dialects.MapName(name, n)
// for the largest n <= 64 whose result fits in 192 bytes: a readable prefix,
// "#", and 16 hex digits of the SHA-256 of the whole name. The mapping is
// deterministic, so every process maps a name to the same lock.
func LockName(name string) string {
	for n := MaxLockNameRunes; ; n-- {
		mapped := dialects.MapName(name, n)
		if len(mapped) <= MaxLockNameBytes || n == 17 {
			return mapped
		}
	}
}
