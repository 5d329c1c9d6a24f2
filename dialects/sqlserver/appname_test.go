package sqlserver

import (
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/microsoft/go-mssqldb/msdsn"
)

// go-mssqldb reads the name back as its app name; one the DSN sets wins.
func TestNameConnections(t *testing.T) {
	const app = "schedlock run a&b c"
	for _, tc := range []struct{ conn, want string }{
		{"sqlserver://sa:pw@h:1433/?database=db&encrypt=disable", app},
		{"sqlserver://sa:pw@h:1433/?App+Name=mine", "mine"},
	} {
		cfg, err := msdsn.Parse(NameConnections(tc.conn, app))
		if err != nil {
			t.Fatalf("%s: %v", tc.conn, err)
		}
		if cfg.AppName != tc.want {
			t.Errorf("%s: app name %q, want %q", tc.conn, cfg.AppName, tc.want)
		}
	}
}

// A lock name of any length gives an app name of at most 128 UTF-16 code
// units, cut between characters (one above U+FFFF takes two).
func TestNameConnectionsCutsLongNames(t *testing.T) {
	for _, tc := range []struct {
		name  string
		units int
	}{
		{strings.Repeat("n", 9950), 128},
		{strings.Repeat("é", 500), 128},
		{"x" + strings.Repeat("😀", 500), 127}, // 14 + 1 + 56×2: the next one would make 129
	} {
		app := "schedlock run " + tc.name
		cfg, err := msdsn.Parse(NameConnections("sqlserver://sa:pw@h:1433/?database=db", app))
		if err != nil {
			t.Fatal(err)
		}
		got := cfg.AppName
		if n := len(utf16.Encode([]rune(got))); n != tc.units || !utf8.ValidString(got) || !strings.HasPrefix(app, got) {
			t.Errorf("app name %.40q… is %d UTF-16 units, want %d, the start of the name in whole characters", got, n, tc.units)
		}
	}
}
