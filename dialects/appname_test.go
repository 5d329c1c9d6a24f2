package dialects_test

import (
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

func TestWithURLParam(t *testing.T) {
	present := func(k string) bool { return k == "app" }
	for _, tc := range []struct{ conn, want string }{
		{"x://h/db", "x://h/db?app=schedlock%20run%20a%26b"},
		{"x://h/db?sslmode=disable", "x://h/db?sslmode=disable&app=schedlock%20run%20a%26b"},
		{"x://h/db?app=mine&sslmode=disable", "x://h/db?app=mine&sslmode=disable"},
		{"x://h/db?%61pp=mine", "x://h/db?%61pp=mine"},
		{"x://h/db#frag", "x://h/db?app=schedlock%20run%20a%26b#frag"},
	} {
		if got := dialects.WithURLParam(tc.conn, "app", "schedlock run a&b", present); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.conn, got, tc.want)
		}
	}
}

// CutAppName keeps whole characters: a name that fits is unchanged, a
// longer one loses the characters that would cross the limit.
func TestCutAppName(t *testing.T) {
	for _, tc := range []struct {
		app  string
		max  int
		want string
	}{
		{"schedlock run a", 63, "schedlock run a"},
		{"abcdef", 3, "abc"},
		{"aé", 2, "a"},         // é is 2 bytes
		{"aéb", 3, "aé"},       // exactly at the end of é
		{"a日本", 5, "a日"},       // 日 and 本 are 3 bytes each
		{"a😀b", 4, "a"},        // 😀 is 4 bytes
		{"a\xffb", 2, "a\xff"}, // a stray byte counts as one character
		{"", 5, ""},
	} {
		if got := dialects.CutAppName(tc.app, tc.max); got != tc.want {
			t.Errorf("CutAppName(%q, %d) = %q, want %q", tc.app, tc.max, got, tc.want)
		}
	}
}
