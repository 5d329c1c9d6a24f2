package sqlserver

import (
	"testing"

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
