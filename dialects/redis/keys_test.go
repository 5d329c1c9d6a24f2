package redis

import "testing"

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
