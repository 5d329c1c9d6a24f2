package postgres

import (
	"testing"

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
