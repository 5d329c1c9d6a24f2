package dsn

import (
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

// x-time-zone reaches the lock table, in both DSN forms (go-sql-driver's
// with the slash escaped), and is kept from the driver; an unknown zone is
// an error naming the option.
func TestTimeZoneOption(t *testing.T) {
	for _, raw := range []string{
		"postgres://app@db:5432/jobs?x-preset=shedlock&x-time-zone=America/New_York",
		"app@tcp(db:3306)/jobs?x-preset=shedlock&x-time-zone=America%2FNew_York",
	} {
		d, err := Parse(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		want := dialects.Table{Preset: dialects.PresetShedlock, TimeZone: "America/New_York"}
		if got := d.Options.Table(); got != want {
			t.Errorf("%s: table %+v, want %+v", raw, got, want)
		}
		if strings.Contains(d.Target().Conn, "time-zone") {
			t.Errorf("%s: the driver sees x-time-zone: %s", raw, d.Target().Conn)
		}
	}
	_, err := Parse("postgres://app@db/jobs?x-time-zone=Mars/Olympus")
	if err == nil || !strings.Contains(err.Error(), `option x-time-zone: invalid argument: unknown time zone "Mars/Olympus"`) {
		t.Errorf("unknown zone: %v", err)
	}
}
