package mysql

import (
	"testing"

	gomysql "github.com/go-sql-driver/mysql"
)

// The name becomes the program_name connection attribute as go-sql-driver
// reads it back, beside the DSN's own attributes; a program_name the DSN
// sets wins.
func TestNameConnections(t *testing.T) {
	const app = "schedlock run a,b:c&d"
	for _, tc := range []struct{ conn, want string }{
		{"u@tcp(h:3306)/db", "program_name:schedlock run a b:c&d"},
		{"u:p@tcp(h:3306)/db?interpolateParams=true", "program_name:schedlock run a b:c&d"},
		{"u@tcp(h)/db?connectionAttributes=team%3Aops", "team:ops,program_name:schedlock run a b:c&d"},
		{"u@tcp(h)/db?connectionAttributes=program_name%3Amine", "program_name:mine"},
	} {
		conn := NameConnections(tc.conn, app)
		cfg, err := gomysql.ParseDSN(conn)
		if err != nil {
			t.Fatalf("%s → %s: %v", tc.conn, conn, err)
		}
		if cfg.ConnectionAttributes != tc.want {
			t.Errorf("%s: connectionAttributes %q, want %q", tc.conn, cfg.ConnectionAttributes, tc.want)
		}
	}
}
