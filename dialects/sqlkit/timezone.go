package sqlkit

import (
	_ "time/tzdata" // zone names resolve in a static binary without /usr/share/zoneinfo

	"github.com/schedlock/schedlock/dialects"
)

// inTimeZone sets the writer time zone of every lease table of tables to
// zone (Liquibase's table has no lease, and keeps none).
func inTimeZone(tables []dialects.Table, zone string) []dialects.Table {
	if zone == "" {
		return tables
	}
	out := make([]dialects.Table, len(tables))
	for i, t := range tables {
		if t.Preset != dialects.PresetLiquibase {
			t.TimeZone = zone
		}
		out[i] = t
	}
	return out
}
