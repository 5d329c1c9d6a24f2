//go:build unix

package cmd

import (
	"slices"
	"testing"

	"github.com/spf13/cobra"

	"github.com/schedlock/schedlock/dialects"
)

// --table-time-zone completes zone names (UTC, Local and the common IANA
// zones, all valid) on every command that takes it, and no file names.
func TestTableTimeZoneCompletion(t *testing.T) {
	for _, command := range [][]string{{"run"}, {"locks", "ls"}, {"unlock", "x"}, {"selfcheck"}} {
		values, directive := complete(t, append(command, "--table-time-zone", "")...)
		for _, want := range []string{"UTC", "Local", "America/New_York", "Europe/Berlin"} {
			if !slices.Contains(values, want) {
				t.Errorf("%v --table-time-zone: %v lacks %s", command, values, want)
			}
		}
		if directive&cobra.ShellCompDirectiveNoFileComp == 0 {
			t.Errorf("%v --table-time-zone: directive %d offers files", command, directive)
		}
	}
	for _, zone := range commonTimeZones {
		if _, err := dialects.LoadTimeZone(zone); err != nil {
			t.Errorf("completion offers %q: %v", zone, err)
		}
	}
}

// Only the commands that read or write lock tables take --table-time-zone.
func TestTableTimeZoneOnlyWhereItApplies(t *testing.T) {
	for _, args := range [][]string{{"detect", "--table-time-zone", "UTC"}, {"bench", "--table-time-zone", "UTC"}} {
		if r := runCmd(t, false, nil, args...); ExitCode(r.err) != CodeUsage {
			t.Errorf("%v: %v, want a usage error", args, r.err)
		}
	}
}
