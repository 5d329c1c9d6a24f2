package dialects

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"unicode/utf8"
)

func validUTF8(s string) bool { return utf8.ValidString(s) }

// NewOwner returns a holder identity unique to this call: host name, process
// id and 8 random hex digits, e.g. "web-3:4711:9f1c2a7b".
func NewOwner() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// MapName fits name into a backend that allows at most maxRunes characters.
// A name that fits is returned unchanged. A longer one keeps its first
// maxRunes-17 characters, then "#" and the first 16 hex digits of the SHA-256
// of the whole name, so the mapping is deterministic, the prefix stays
// readable in listings, and two long names that share a prefix stay apart.
// maxRunes must be at least 17.
func MapName(name string, maxRunes int) string {
	if utf8.RuneCountInString(name) <= maxRunes {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	keep := maxRunes - 17
	prefix := make([]rune, 0, keep)
	for _, r := range name {
		if len(prefix) == keep {
			break
		}
		prefix = append(prefix, r)
	}
	return string(prefix) + "#" + hex.EncodeToString(sum[:8])
}
