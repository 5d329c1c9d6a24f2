package sqlserver

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf16"
)

// Name limits, in UTF-16 code units (the characters of nvarchar).
const (
	// ListableNameUnits is how much of an application-lock name
	// sys.dm_tran_locks shows in resource_description; the rest is only a
	// hash. Session lock names are kept within it so that every lock can be
	// listed under its name.
	ListableNameUnits = 32
	// AppLockResourceUnits is sp_getapplock's @Resource, nvarchar(255);
	// longer resources are silently truncated by the server.
	AppLockResourceUnits = 255
	// hashSuffixUnits is "#" and 16 hex digits.
	hashSuffixUnits = 17
)

// LockName is the sp_getapplock resource of the lock called name: name
// itself when it has at most 32 UTF-16 code units (ListableNameUnits) and
// does not end in a space; otherwise FitName(name, 32): its first 15 code
// units (whole characters only), "#" and the first 16 hex digits of the
// SHA-256 of the whole name's UTF-8 bytes. Every resource therefore shows in
// full in sys.dm_tran_locks, and the mapping is deterministic, so every
// process maps a name to the same lock.
//
// A name that happens to look exactly like the mapping of a longer one
// (prefix, "#", those 16 hex digits) is the same lock; such a name can only
// be made on purpose.
func LockName(name string) string { return FitName(name, ListableNameUnits) }

// FitName fits name into an nvarchar(limit) column or parameter that SQL
// Server compares with its padding rule, under which names differing only
// in trailing spaces are equal ("a" = "a "). A name of at most limit UTF-16
// code units that does not end in a space is returned unchanged. Any other
// name keeps as many whole leading characters as fit in limit-17 code
// units, then "#" and the first 16 hex digits of the SHA-256 of the whole
// name: the result never ends in a space, fits in limit code units, stays
// readable, and two names that share a prefix stay apart. For names of the
// Basic Multilingual Plane without trailing spaces it equals
// dialects.MapName(name, limit). limit must be at least 18.
func FitName(name string, limit int) string {
	if utf16Len(name) <= limit && !strings.HasSuffix(name, " ") {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	budget := limit - hashSuffixUnits
	var b strings.Builder
	used := 0
	for _, r := range name {
		n := utf16.RuneLen(r)
		if n < 0 {
			n = 1 // invalid UTF-8 decodes to U+FFFD, one code unit
		}
		if used+n > budget {
			break
		}
		b.WriteRune(r)
		used += n
	}
	return b.String() + "#" + hex.EncodeToString(sum[:8])
}

// utf16Len is the length of s in UTF-16 code units, as nvarchar counts it.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if l := utf16.RuneLen(r); l > 0 {
			n += l
		} else {
			n++
		}
	}
	return n
}
