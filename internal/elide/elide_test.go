package elide

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestQuoteKeepsShortValues(t *testing.T) {
	for _, s := range []string{"", "nightly", `a"b`, strings.Repeat("x", MaxRunes), "x\x00y", "\xff"} {
		if got, want := Quote(s), strconv.Quote(s); got != want {
			t.Errorf("Quote(%q) = %s, want %s", s, got, want)
		}
	}
}

func TestQuoteCutsLongValues(t *testing.T) {
	for _, s := range []string{strings.Repeat("x", 131072), strings.Repeat("名", 10000), strings.Repeat("\xff", 500)} {
		got := Quote(s)
		if len(got) > 300 {
			t.Errorf("Quote of %d bytes is %d bytes long", len(s), len(got))
		}
		if !strings.Contains(got, "…") || !strings.HasSuffix(got, " bytes)") {
			t.Errorf("Quote = %s: no ellipsis or length", got)
		}
	}
}

func TestString(t *testing.T) {
	if got := String("abcdef", 10); got != "abcdef" {
		t.Errorf("String kept %q", got)
	}
	got := String(strings.Repeat("ключ", 100), 10)
	if want := "ключключк…(800 bytes)"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if !utf8.ValidString(got) {
		t.Errorf("String cut a character: %q", got)
	}
}

func TestArgsKeepsWhole(t *testing.T) {
	long := strings.Repeat("x", 3*MaxArgRunes)
	got := Args([]any{long, Whole(long), 7})
	if s := got[0].(string); !strings.HasSuffix(s, " bytes)") {
		t.Errorf("Args kept a long string whole: %q", s)
	}
	if w, ok := got[1].(Whole); !ok || string(w) != long {
		t.Errorf("Args cut a Whole string: %v", got[1])
	}
	if got[2] != 7 {
		t.Errorf("Args changed an int: %v", got[2])
	}
}
