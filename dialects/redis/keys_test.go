package redis

import (
	"testing"
	"time"
)

// lockKeys gives an acquire the same keys as key and tokenKey, on both
// layouts, for names with and without the characters escapeTag encodes.
func TestLockKeys(t *testing.T) {
	for _, l := range []layout{{native: true, prefix: "schedlock"}, {prefix: "default"}} {
		for _, name := range []string{"nightly", "a{b}c", "100%", "{}", "ü x"} {
			keys := l.lockKeys(name)
			if keys[0] != l.key(name) {
				t.Errorf("%+v %q: lock key %q, want %q", l, name, keys[0], l.key(name))
			}
			if l.native && (len(keys) != 2 || keys[1] != l.tokenKey(name)) {
				t.Errorf("%+v %q: keys %q, want the counter %q second", l, name, keys, l.tokenKey(name))
			}
			if !l.native && len(keys) != 1 {
				t.Errorf("%+v %q: keys %q, want the lock key alone", l, name, keys)
			}
		}
	}
}

// parseNativeValue reads both forms of the native value exactly as the
// scripts' Lua patterns do, and newNativeValue writes the span form.
func TestParseNativeValue(t *testing.T) {
	for v, want := range map[string]nativeValue{
		"60000 abcdefghijkl host a:1":      {owner: "host a:1", span: 60000, spanForm: true, ok: true},
		"60000 abcdefghijkl ":              {owner: "", span: 60000, spanForm: true, ok: true},
		"7 1764620000123 old node":         {owner: "old node", token: 7, lockedAt: time.UnixMilli(1764620000123).UTC(), ok: true},
		"+7 1764620000123 x":               {owner: "+7 1764620000123 x"},
		"7 -5 x":                           {owner: "7 -5 x"},
		"7 ab1 x":                          {owner: "7 ab1 x"},
		"60000 abc":                        {owner: "60000 abc"},
		"ADDED:2026-01-01T00:00:00.000Z@h": {owner: "ADDED:2026-01-01T00:00:00.000Z@h"},
	} {
		if got := parseNativeValue(v); got != want {
			t.Errorf("parseNativeValue(%q) = %+v, want %+v", v, got, want)
		}
	}
	v, ident := newNativeValue("host a:1", 1500)
	if got := parseNativeValue(v); !got.spanForm || got.span != 1500 || got.owner != "host a:1" || v != "1500"+ident {
		t.Errorf("newNativeValue = %q, %q; read back %+v", v, ident, got)
	}
	if other, _ := newNativeValue("host a:1", 1500); other == v {
		t.Errorf("two acquires wrote the same value %q", v)
	}
}
