package sqlserver

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/schedlock/schedlock/dialects"
)

func TestLockName(t *testing.T) {
	long := "nightly-report-for-region-eu-west-1" // 35 characters
	tests := []struct {
		name, want string
	}{
		{"job", "job"},
		{strings.Repeat("a", 32), strings.Repeat("a", 32)},
		{"日本語 ключ 🔒", "日本語 ключ 🔒"}, // 11 characters, 12 UTF-16 code units
		{long, "nightly-report-#" + sha16(long)},
		{strings.Repeat("a", 33), strings.Repeat("a", 15) + "#" + sha16(strings.Repeat("a", 33))},
		{"a ", "a #" + sha16("a ")},
		{"🔒🔒🔒🔒🔒🔒🔒🔒🔒🔒🔒🔒🔒🔒🔒🔒🔒", "🔒🔒🔒🔒🔒🔒🔒#" + sha16("🔒🔒🔒🔒🔒🔒🔒🔒🔒🔒🔒🔒🔒🔒🔒🔒🔒")}, // 17 runes, 34 code units
	}
	for _, tt := range tests {
		if got := LockName(tt.name); got != tt.want {
			t.Errorf("LockName(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// sha16 is the first 16 hex digits of the SHA-256 of name.
func sha16(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:8])
}

func TestFitNameAgreesWithMapName(t *testing.T) {
	for _, name := range []string{strings.Repeat("ключ-", 80), strings.Repeat("a", 256), "short"} {
		for _, limit := range []int{32, 64, 255} {
			if got, want := FitName(name, limit), dialects.MapName(name, limit); got != want {
				t.Errorf("FitName(%q…, %d) = %q; MapName gives %q", name[:10], limit, got, want)
			}
		}
	}
}

// FuzzFitName checks the promises of FitName for any input: the result
// fits, never ends in a space, is deterministic, leaves a fitting name
// alone, and keeps a name with a trailing space apart from the name
// without it.
func FuzzFitName(f *testing.F) {
	for _, s := range []string{"", "a", "a ", "a  ", strings.Repeat("x", 40), "🔒 ", "日本語", "\xff\xfe"} {
		f.Add(s, 32)
	}
	f.Fuzz(func(t *testing.T, name string, limit int) {
		if limit < 18 || limit > 300 {
			limit = 18 + (limit%283+283)%283
		}
		got := FitName(name, limit)
		if utf16Len(got) > limit {
			t.Fatalf("FitName(%q, %d) = %q has %d code units", name, limit, got, utf16Len(got))
		}
		if strings.HasSuffix(got, " ") {
			t.Fatalf("FitName(%q, %d) = %q ends in a space", name, limit, got)
		}
		if FitName(name, limit) != got {
			t.Fatal("FitName is not deterministic")
		}
		if utf16Len(name) <= limit && !strings.HasSuffix(name, " ") && got != name {
			t.Fatalf("FitName(%q, %d) changed a name that fits: %q", name, limit, got)
		}
		if utf8.ValidString(name) && strings.TrimRight(name, " ") != name && FitName(strings.TrimRight(name, " "), limit) == got {
			t.Fatalf("%q and its trimmed form map to the same %q", name, got)
		}
	})
}
