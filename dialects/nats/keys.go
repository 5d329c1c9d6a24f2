package nats

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// keyOf maps a lock name to a NATS key: bytes outside A-Z, a-z, 0-9, "_"
// and "-" become "=HH" (upper-case hex). Reversed by nameOf.
func keyOf(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "=%02X", c)
	}
	return b.String()
}

// nameOf is the lock name of a key keyOf wrote; ok is false for a key
// keyOf cannot have written.
func nameOf(key string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		if key[i] != '=' {
			b.WriteByte(key[i])
			continue
		}
		if i+2 >= len(key) {
			return "", false
		}
		v, err := strconv.ParseUint(key[i+1:i+3], 16, 8)
		if err != nil {
			return "", false
		}
		b.WriteByte(byte(v))
		i += 2
	}
	return b.String(), true
}

// sortStrings sorts s in place.
func sortStrings(s []string) { slices.Sort(s) }
