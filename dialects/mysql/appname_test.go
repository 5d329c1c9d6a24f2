package mysql

import (
	"strings"
	"testing"
	"unicode/utf8"

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

// A lock name of any length gives a program_name of at most 1024 bytes,
// cut between characters, beside the DSN's own attributes.
func TestNameConnectionsCutsLongNames(t *testing.T) {
	for _, name := range []string{strings.Repeat("n", 70000), strings.Repeat("é", 5000)} {
		app := "schedlock run " + name
		cfg, err := gomysql.ParseDSN(NameConnections("u@tcp(h)/db?connectionAttributes=team%3Aops", app))
		if err != nil {
			t.Fatal(err)
		}
		got, ok := strings.CutPrefix(cfg.ConnectionAttributes, "team:ops,"+ProgramNameAttribute+":")
		if !ok || len(got) > MaxProgramName || len(got) < MaxProgramName-3 || !utf8.ValidString(got) || !strings.HasPrefix(app, got) {
			t.Errorf("program_name %.80q… (%d bytes): want the first ≤1024 bytes of the name, whole characters", got, len(got))
		}
	}
}
