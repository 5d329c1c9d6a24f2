package oracle

import (
	"testing"

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
