package redis

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// Key layouts (docs/backends.md, "Redis"):
//
// schedlock (native), prefix P (Table.Name, default "schedlock"):
//
//	P:{TAG}        string "<span> <nonce> <owner>" (see nativeValue),
//	               expiring at the lease end: locked-at is that expiry
//	               less the span, on the server's clock
//	P:{TAG}:token  the fencing-token counter of the name, the token of
//	               the lock: max(last + 1, server TIME in µs), see
//	               acquireNative; kept when the lock is released, so
//	               tokens only grow, and with the clock as their floor
//	               they grow on when the key is lost
//
// TAG is the name with '%', '{' and '}' percent-encoded (%25, %7B, %7D),
// so the whole name is the Cluster hash tag: both keys of a name are in
// one slot (the scripts touch both), whatever braces the name holds.
//
// shedlock, environment E (Table.Name, or the namespace: see
// environment.go; default "default"):
//
//	job-lock:E:NAME  string "ADDED:<ISO-8601 instant, ms, UTC>@<owner>"
//	                 with the lease as its expiry (PX)
//
// exactly ShedLock's InternalRedisLockProvider: no token, and in Cluster
// a '{…}' in the name is ShedLock's hash tag too.

// ShedLock's key prefix and default environment.
const (
	shedlockPrefix = "job-lock"
	shedlockEnv    = "default"
)

// tokenSuffix ends the counter key of a native lock.
const tokenSuffix = ":token"

// layout is one table's key layout.
type layout struct {
	schema dialects.Schema
	// prefix is the native key prefix, or ShedLock's environment.
	prefix string
	native bool
}

// newLayout resolves t: the schedlock or shedlock preset; others are
// unsupported on Redis.
func newLayout(t dialects.Table) (layout, error) {
	if t.Preset == dialects.PresetShedlock {
		// The name is ShedLock's environment, not an identifier: any text
		// checkEnv takes (a namespace such as eu-prod, an environment a
		// listing found).
		env := envOf(t.Name)
		if err := checkEnv(env); err != nil {
			return layout{}, err
		}
		schema, err := dialects.Table{Preset: t.Preset, TimeZone: t.TimeZone}.Schema()
		if err != nil {
			return layout{}, err
		}
		schema.Table = env
		return layout{schema: schema, prefix: env}, nil
	}
	schema, err := t.Schema()
	if err != nil {
		return layout{}, err
	}
	if schema.Preset == dialects.PresetSchedlock {
		return layout{schema: schema, prefix: schema.Table, native: true}, nil
	}
	return layout{}, dialects.Wrap(Name, "table locker", unsupportedf("Redis has no %s key layout: use the schedlock or shedlock preset", schema.Preset))
}

// key is the lock key of name.
func (l layout) key(name string) string {
	if l.native {
		return l.prefix + ":{" + escapeTag(name) + "}"
	}
	return shedlockPrefix + ":" + l.prefix + ":" + name
}

// tokenKey is the counter key of name (native layout).
func (l layout) tokenKey(name string) string { return l.key(name) + tokenSuffix }

// lockKeys are the keys of an acquire of name: the lock key, and on the
// native layout its counter key (built as one string, the lock key a
// prefix of it).
func (l layout) lockKeys(name string) []string {
	if !l.native {
		return []string{l.key(name)}
	}
	counter := l.prefix + ":{" + escapeTag(name) + "}" + tokenSuffix
	return []string{counter[:len(counter)-len(tokenSuffix)], counter}
}

// match is the SCAN pattern of the layout's keys.
func (l layout) match() string {
	if l.native {
		return globEscape(l.prefix) + ":{*"
	}
	return shedlockPrefix + ":" + globEscape(l.prefix) + ":*"
}

// aclKeys is the ACL key pattern that covers the layout's keys (lock and
// token counter keys): "~schedlock:*", "~job-lock:default:*".
func (l layout) aclKeys() string {
	if l.native {
		return "~" + globEscape(l.prefix) + ":*"
	}
	return "~" + shedlockPrefix + ":" + globEscape(l.prefix) + ":*"
}

// nameOf returns the lock name of a key of the layout and whether the key
// is a counter key; ok is false for a key of another shape.
func (l layout) nameOf(key string) (name string, counter, ok bool) {
	if !l.native {
		p := shedlockPrefix + ":" + l.prefix + ":"
		if !strings.HasPrefix(key, p) || len(key) == len(p) {
			return "", false, false
		}
		return key[len(p):], false, true
	}
	p := l.prefix + ":{"
	if !strings.HasPrefix(key, p) {
		return "", false, false
	}
	rest := key[len(p):]
	if strings.HasSuffix(rest, "}"+tokenSuffix) {
		rest, counter = strings.TrimSuffix(rest, tokenSuffix), true
	}
	if !strings.HasSuffix(rest, "}") {
		return "", false, false
	}
	name, ok = unescapeTag(strings.TrimSuffix(rest, "}"))
	return name, counter, ok && name != ""
}

var tagEscaper = strings.NewReplacer("%", "%25", "{", "%7B", "}", "%7D")

// escapeTag percent-encodes '%', '{' and '}' of name.
func escapeTag(name string) string {
	if !strings.ContainsAny(name, "%{}") {
		return name
	}
	return tagEscaper.Replace(name)
}

// unescapeTag reverses escapeTag; ok is false for a tag escapeTag cannot
// have made.
func unescapeTag(tag string) (string, bool) {
	if strings.ContainsAny(tag, "{}") {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(tag); i++ {
		if tag[i] != '%' {
			b.WriteByte(tag[i])
			continue
		}
		if i+2 >= len(tag) {
			return "", false
		}
		switch tag[i+1 : i+3] {
		case "25":
			b.WriteByte('%')
		case "7B":
			b.WriteByte('{')
		case "7D":
			b.WriteByte('}')
		default:
			return "", false
		}
		i += 2
	}
	return b.String(), true
}

// globEscape escapes the glob characters of a SCAN MATCH pattern.
func globEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`, "]", `\]`).Replace(s)
}

// newNativeValue is the value an acquire writes, "<span> <nonce>
// <owner>" — the span at-most in ms (the key's expiry less its
// locked-at), the nonce 12 random letters, so that no two acquires write
// the same value — and its identity, all after the span (" <nonce>
// <owner>"), which refreshes and releases compare.
func newNativeValue(owner string, atMostMS int64) (value, ident string) {
	b := make([]byte, 0, 20+nonceLen+2+len(owner))
	b = strconv.AppendInt(b, atMostMS, 10)
	span := len(b)
	b = append(b, ' ')
	n := rand.Uint64()
	for range nonceLen {
		b = append(b, byte('a'+n%26))
		n /= 26
	}
	b = append(b, ' ')
	value = string(append(b, owner...))
	return value, value[span:]
}

// nonceLen is the length of a native value's nonce: 26^12 is below 2^64.
const nonceLen = 12

// nativeValue is a native lock key's value read back, of either form:
// the span form "<span> <nonce> <owner>" (newNativeValue; the nonce is
// letters), whose token only the counter key keeps, or the earlier form
// "<token> <locked_at> <owner>" (both numbers; written by schedlock
// before the span form), whose token and locked-at (server Unix ms) are
// the value's own.
type nativeValue struct {
	owner string
	// span is the key's expiry less its locked-at, in ms (span form).
	span int64
	// token and lockedAt are the earlier form's (spanForm false).
	token    int64
	lockedAt time.Time
	spanForm bool
	// ok is false for a value of neither form (owner is then all of it).
	ok bool
}

// parseNativeValue reads a native lock key's value as the scripts'
// patterns do ('^(%d+) %a+ (.*)$', '^(%d+) (%d+) (.*)$').
func parseNativeValue(v string) nativeValue {
	first, rest, ok1 := strings.Cut(v, " ")
	second, owner, ok2 := strings.Cut(rest, " ")
	n, err := strconv.ParseInt(first, 10, 64)
	if !ok1 || !ok2 || err != nil || !allOf(first, isDigit) || second == "" {
		return nativeValue{owner: v}
	}
	if allOf(second, isLetter) {
		return nativeValue{owner: owner, span: n, spanForm: true, ok: true}
	}
	at, err := strconv.ParseInt(second, 10, 64)
	if err != nil || !allOf(second, isDigit) {
		return nativeValue{owner: v}
	}
	return nativeValue{owner: owner, token: n, lockedAt: time.UnixMilli(at).UTC(), ok: true}
}

func allOf(s string, is func(byte) bool) bool {
	for i := range len(s) {
		if !is(s[i]) {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// parseShedlockValue reads "ADDED:<instant>@<owner>"; the instant is zero
// when it does not parse (a value another tool wrote).
func parseShedlockValue(v string) (lockedAt time.Time, owner string) {
	rest, ok := strings.CutPrefix(v, "ADDED:")
	if !ok {
		return time.Time{}, v
	}
	at, owner, ok := strings.Cut(rest, "@")
	if !ok {
		return time.Time{}, v
	}
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return time.Time{}, owner
	}
	return t.UTC(), owner
}
