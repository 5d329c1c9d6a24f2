package oracle

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sijms/go-ora/v2/configurations"
)

// go-ora reads the name back as its program name; one the DSN sets wins.
func TestNameConnections(t *testing.T) {
	const app = "schedlock run a&b c"
	for _, tc := range []struct{ conn, want string }{
		{"oracle://u:p@h:1521/svc", app},
		{"oracle://u:p@h:1521/svc?program=mine", "mine"},
	} {
		cfg, err := configurations.ParseConfig(NameConnections(tc.conn, app))
		if err != nil {
			t.Fatalf("%s: %v", tc.conn, err)
		}
		if cfg.ClientInfo.ProgramName != tc.want {
			t.Errorf("%s: program %q, want %q", tc.conn, cfg.ClientInfo.ProgramName, tc.want)
		}
	}
}

// A lock name of any length gives a program of at most 64 bytes, cut
// between characters.
func TestNameConnectionsCutsLongNames(t *testing.T) {
	for _, name := range []string{strings.Repeat("n", 9950), strings.Repeat("é", 5000)} {
		app := "schedlock run " + name
		cfg, err := configurations.ParseConfig(NameConnections("oracle://u:p@h:1521/svc", app))
		if err != nil {
			t.Fatal(err)
		}
		got := cfg.ClientInfo.ProgramName
		if len(got) > MaxProgram || len(got) < MaxProgram-1 || !utf8.ValidString(got) || !strings.HasPrefix(app, got) {
			t.Errorf("program %q (%d bytes): want the first ≤64 bytes of the name, whole characters", got, len(got))
		}
	}
}
