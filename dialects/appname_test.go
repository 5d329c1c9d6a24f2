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
