package postgres

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"
)

// The name reaches pgx's runtime parameters in both connection-string
// forms, quoted as pgx reads it back; a name the DSN sets wins.
func TestNameConnections(t *testing.T) {
	const app = `schedlock run it's a\b`
	for _, tc := range []struct{ conn, want string }{
		{"postgres://u@h/db", app},
		{"postgres://u@h/db?sslmode=disable", app},
		{"postgres://u@h/db?application_name=mine", "mine"},
		{"host=h user=u", app},
		{"host=h application_name=mine user=u", "mine"},
		{"host=h user=u application_name = 'mine too'", "mine too"},
	} {
		cfg, err := pgconn.ParseConfig(NameConnections(tc.conn, app))
		if err != nil {
			t.Fatalf("%s: %v", tc.conn, err)
		}
		if got := cfg.RuntimeParams["application_name"]; got != tc.want {
			t.Errorf("%s: application_name %q, want %q", tc.conn, got, tc.want)
		}
	}
}

// A lock name of any length gives an application_name of at most 63
// bytes, cut between characters: the server keeps no more, and a startup
// packet over 10,000 bytes is refused.
func TestNameConnectionsCutsLongNames(t *testing.T) {
	for _, name := range []string{strings.Repeat("n", 9950), strings.Repeat("é", 5000), "x" + strings.Repeat("日", 4000)} {
		app := "schedlock run " + name
		for _, conn := range []string{"postgres://u@h/db", "host=h user=u"} {
			cfg, err := pgconn.ParseConfig(NameConnections(conn, app))
			if err != nil {
				t.Fatalf("%s: %v", conn, err)
			}
			got := cfg.RuntimeParams["application_name"]
			if len(got) > MaxApplicationName || len(got) < MaxApplicationName-3 || !utf8.ValidString(got) || !strings.HasPrefix(app, got) {
				t.Errorf("%s: application_name %q (%d bytes): want the first ≤63 bytes of the name, whole characters", conn, got, len(got))
			}
		}
	}
}
