package nats

import (
	"strings"
	"testing"
)

// TestKeyMapping checks that lock names map to valid NATS keys and back.
func TestKeyMapping(t *testing.T) {
	for _, name := range []string{"nightly", "a.b/c", "..", "*", ">", "with space", "x=41", "日本", "-_", strings.Repeat("é", 40)} {
		key := keyOf(name)
		if key == "" || strings.ContainsAny(key, ". */>") {
			t.Errorf("keyOf(%q) = %q: not a single-token NATS key", name, key)
		}
		back, ok := nameOf(key)
		if !ok || back != name {
			t.Errorf("nameOf(keyOf(%q)) = %q, %v", name, back, ok)
		}
	}
	if keyOf("a.b") == keyOf("a=2Eb") {
		t.Error("two names share a key")
	}
}
