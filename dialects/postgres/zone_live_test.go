package postgres

import (
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects/locktable/locktabletest"
)

// TestZoneConversionLive: on the live server, the SQL of a New York writer
// time zone (the golden frame, around 2026-11-01) converts wall-clock times
// to instants (the repeated hour as the later one) and back.
func TestZoneConversionLive(t *testing.T) {
	db := liveDB(t)
	s, err := locktabletest.ZonedSchema(locktabletest.ZoneGoldenTable, locktabletest.ZoneGoldenAt)
	if err != nil {
		t.Fatal(err)
	}
	z := zone(s)
	lit := func(v time.Time) string { return "TIMESTAMP '" + v.Format("2006-01-02 15:04:05") + "'" }
	check := func(kind string, c locktabletest.ZoneCase, expr string) {
		t.Helper()
		var ms int64
		if err := db.QueryRowContext(testCtx(t), "SELECT "+epochMs(expr)).Scan(&ms); err != nil {
			t.Fatalf("%s %s: %v", kind, c.Name, err)
		}
		if got := time.UnixMilli(ms).UTC(); !got.Equal(c.Want) {
			t.Errorf("%s %s: %s gives %s, want %s", kind, c.Name, c.From.Format(time.DateTime), got.Format(time.DateTime), c.Want.Format(time.DateTime))
		}
	}
	for _, c := range locktabletest.ZoneToUTCCases {
		check("ToUTC", c, z.ToUTC(lit(c.From)))
	}
	for _, c := range locktabletest.ZoneToLocalCases {
		check("ToLocal", c, z.ToLocal(lit(c.From)))
	}
}
