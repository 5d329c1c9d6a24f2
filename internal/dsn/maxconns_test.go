package dsn

import (
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

// x-max-conns is parsed, stripped from what the driver sees, defaults to
// dialects.DefaultMaxConns and refuses what is not a count of at least 1.
func TestMaxConnsOption(t *testing.T) {
	d, err := Parse("postgres://app@db1:5432/jobs?sslmode=disable&x-max-conns=4")
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Options.MaxConns(); got != 4 {
		t.Errorf("MaxConns = %d, want 4", got)
	}
	if got := dialects.MaxConnsOf(d.Target().Options); got != 4 {
		t.Errorf("the backend sees a limit of %d, want 4", got)
	}
	if strings.Contains(d.conn, "max-conns") {
		t.Errorf("the driver sees %q", d.conn)
	}
	none, err := Parse("postgres://app@db1:5432/jobs")
	if err != nil {
		t.Fatal(err)
	}
	if got := none.Options.MaxConns(); got != dialects.DefaultMaxConns {
		t.Errorf("MaxConns without the option = %d, want the default %d", got, dialects.DefaultMaxConns)
	}
	for bad, want := range map[string]string{
		"0":      "at least 1",
		"-3":     "at least 1",
		"":       "empty",
		"four":   "not a whole number",
		"100000": "above the bound",
	} {
		_, err := Parse("mysql://root@127.0.0.1:3306/test?x-max-conns=" + bad)
		if err == nil || !strings.Contains(err.Error(), "x-max-conns") || !strings.Contains(err.Error(), want) {
			t.Errorf("x-max-conns=%s: error %v, want one naming the option and saying %q", bad, err, want)
		}
	}
}
