package cmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/dsn"
)

// tableTimeZoneUsage is the --table-time-zone help of the command called
// name.
func tableTimeZoneUsage(name string) string {
	what := map[string]string{
		"run":       "the time zone the lock table's zone-less lock_until and locked_at are written in, e.g. America/New_York for a ShedLock JVM there without usingDbTime() (default x-time-zone, else UTC)",
		"ls":        "read the lock tables' zone-less times as wall-clock time of this zone, e.g. Europe/Berlin (default x-time-zone, else UTC)",
		"unlock":    "read and write the lock table's zone-less times in this zone, e.g. Europe/Berlin (default x-time-zone, else UTC)",
		"selfcheck": "check the lock table with its times written in this zone, e.g. Europe/Berlin (default x-time-zone, else UTC)",
		"pause":     "write the pause's zone-less lock_until and locked_at in this zone, as the table's other writers do, e.g. America/New_York (default x-time-zone, else UTC)",
		"resume":    "read and write the lock table's zone-less times in this zone, e.g. America/New_York (default x-time-zone, else UTC)",
		"exporter":  "read every database's lock tables' zone-less times as wall-clock time of this zone, e.g. Europe/Berlin (default each DSN's x-time-zone, else UTC)",
	}[name]
	return what
}

// commonTimeZones are the zone names completion offers: UTC, the host's
// zone and the zones of the largest cities of each region. Any IANA name
// works.
var commonTimeZones = []string{
	dialects.TimeZoneUTC, dialects.TimeZoneLocal,
	"America/New_York", "America/Chicago", "America/Denver", "America/Los_Angeles", "America/Anchorage",
	"America/Toronto", "America/Vancouver", "America/Mexico_City", "America/Sao_Paulo", "America/Bogota",
	"America/Argentina/Buenos_Aires", "America/Santiago", "America/Lima", "America/Halifax", "Pacific/Honolulu",
	"Europe/London", "Europe/Dublin", "Europe/Lisbon", "Europe/Paris", "Europe/Berlin", "Europe/Madrid",
	"Europe/Rome", "Europe/Amsterdam", "Europe/Brussels", "Europe/Zurich", "Europe/Vienna", "Europe/Stockholm",
	"Europe/Oslo", "Europe/Copenhagen", "Europe/Helsinki", "Europe/Warsaw", "Europe/Prague", "Europe/Athens",
	"Europe/Bucharest", "Europe/Istanbul", "Europe/Kyiv", "Europe/Moscow",
	"Africa/Cairo", "Africa/Johannesburg", "Africa/Lagos", "Africa/Nairobi",
	"Asia/Dubai", "Asia/Karachi", "Asia/Kolkata", "Asia/Dhaka", "Asia/Bangkok", "Asia/Jakarta",
	"Asia/Singapore", "Asia/Hong_Kong", "Asia/Shanghai", "Asia/Taipei", "Asia/Seoul", "Asia/Tokyo",
	"Asia/Manila", "Asia/Jerusalem", "Asia/Tehran",
	"Australia/Perth", "Australia/Adelaide", "Australia/Brisbane", "Australia/Sydney", "Australia/Melbourne",
	"Pacific/Auckland",
}

// addTableTimeZoneFlag gives c --table-time-zone, bound to g.
func addTableTimeZoneFlag(c *cobra.Command, g *GlobalOptions) {
	c.Flags().StringVar(&g.TableTimeZone, "table-time-zone", "", tableTimeZoneUsage(c.Name()))
	_ = c.RegisterFlagCompletionFunc("table-time-zone", cobra.FixedCompletions(commonTimeZones, cobra.ShellCompDirectiveNoFileComp))
}

// tableTimeZone is the writer time zone of the lock tables the command
// reads and writes: --table-time-zone, else the DSN's x-time-zone (already
// validated by dsn.Parse), else "" (UTC). An unknown zone is a usage error
// of command.
func (g *GlobalOptions) tableTimeZone(command string, target *dsn.DSN) (string, error) {
	if g.TableTimeZone == "" {
		if target == nil {
			return "", nil
		}
		return target.Options[dsn.OptTimeZone], nil
	}
	if _, err := dialects.LoadTimeZone(g.TableTimeZone); err != nil {
		return "", &UsageError{Err: fmt.Errorf("--table-time-zone: %w", err), Command: command}
	}
	return g.TableTimeZone, nil
}

// zonedTables gives the lock tables of an administrative command (nil:
// the known ones) the writer time zone zone.
func zonedTables(tables []dialects.Table, zone string) []dialects.Table {
	if zone == "" {
		return tables
	}
	if len(tables) == 0 {
		return dialects.KnownTablesIn(zone)
	}
	out := make([]dialects.Table, len(tables))
	for i, t := range tables {
		t.TimeZone = zone
		out[i] = t
	}
	return out
}

// inTableTimeZone gives the plan's table the writer time zone of
// --table-time-zone or x-time-zone; with a zone and no table, the check
// runs on a temporary native table in that zone.
func (p *selfcheckPlan) inTableTimeZone(g *GlobalOptions, command string) error {
	zone, err := g.tableTimeZone(command, p.target)
	if err != nil || zone == "" {
		return err
	}
	if len(p.tables) == 0 {
		p.tables = []dialects.Table{{Preset: dialects.PresetSchedlock, Name: checks.NewPrefix() + "_" + dialects.PresetSchedlock}}
	}
	for i := range p.tables {
		p.tables[i].TimeZone = zone
	}
	return nil
}
