package dbmslock

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLockName(t *testing.T) {
	room := MaxLockNameBytes - len(LockNamePrefix)
	tests := []struct {
		name   string
		in     string
		mapped bool // shortened with a hash
	}{
		{"short", "nightly-report", false},
		{"fits exactly", strings.Repeat("a", room), false},
		{"one byte too long", strings.Repeat("a", room+1), true},
		{"multi-byte that fits", strings.Repeat("名", room/3), false},
		{"multi-byte too long", strings.Repeat("名", room/3+1), true},
		{"four-byte runes", strings.Repeat("🔒", 100), true},
		{"reserved prefix inside", "ORA$job", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := LockName(tt.in)
			if len(got) > MaxLockNameBytes {
				t.Errorf("LockName is %d bytes, more than %d", len(got), MaxLockNameBytes)
			}
			if !strings.HasPrefix(got, LockNamePrefix) || strings.HasPrefix(got, "ORA$") {
				t.Errorf("LockName(%q) = %q: must start with %s, never ORA$", tt.in, got, LockNamePrefix)
			}
			if !utf8.ValidString(got) {
				t.Errorf("LockName(%q) is not valid UTF-8", tt.in)
			}
			back, ours := SessionLockName(got)
			switch {
			case !ours:
				t.Errorf("SessionLockName(%q) does not recognise schedlock's prefix", got)
			case !tt.mapped && back != tt.in:
				t.Errorf("SessionLockName(LockName(%q)) = %q; want the name back", tt.in, back)
			case tt.mapped && (back == tt.in || !strings.Contains(back, "#")):
				t.Errorf("LockName(%q) = %q; want a shortened name with a hash", tt.in, got)
			}
			if LockName(tt.in) != got {
				t.Errorf("LockName is not deterministic for %q", tt.in)
			}
		})
	}
	if _, ours := SessionLockName("OTHER_APP_LOCK"); ours {
		t.Error("another application's lock was taken for schedlock's")
	}
}

// FuzzLockName: every name maps into 128 bytes of valid UTF-8 under the
// prefix, deterministically, and two different names that both fit map to
// different locks.
func FuzzLockName(f *testing.F) {
	for _, s := range []string{"a", "a ", "a%b", strings.Repeat("x", 200), "日本語 ключ 🔒", strings.Repeat("é", 60)} {
		f.Add(s, s+"x")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if !utf8.ValidString(a) || !utf8.ValidString(b) || a == "" || b == "" {
			return
		}
		la, lb := LockName(a), LockName(b)
		if len(la) > MaxLockNameBytes || !strings.HasPrefix(la, LockNamePrefix) || !utf8.ValidString(la) {
			t.Fatalf("LockName(%q) = %q breaks the limits", a, la)
		}
		if LockName(a) != la {
			t.Fatalf("LockName(%q) is not deterministic", a)
		}
		if a != b && la == lb {
			t.Fatalf("%q and %q map to the same lock %q", a, b, la)
		}
	})
}
