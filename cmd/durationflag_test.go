package cmd

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Every duration flag of every command is read by duration.Parse, so it
// takes ISO 8601 as well as Go's form, and its command's help says so.
func TestEveryDurationFlagTakesISO(t *testing.T) {
	seen := 0
	walkCommands(testRoot(t), func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(fl *pflag.Flag) {
			if fl.Value.Type() != "duration" {
				return
			}
			seen++
			if _, ok := fl.Value.(*durationValue); !ok {
				t.Errorf("%s --%s is a %T, not read by duration.Parse", c.CommandPath(), fl.Name, fl.Value)
			}
			if !strings.Contains(c.Long, "PT1H30M") || !strings.Contains(c.Long, "P1D (a day is") {
				t.Errorf("%s --help does not say durations take ISO 8601", c.CommandPath())
			}
		})
	})
	if seen < 10 {
		t.Errorf("found %d duration flags; the walk missed some", seen)
	}
}

// A run takes ISO 8601 durations on the command line, from its variables
// and in x-partition-bound; the lock row shows what they said: the lease
// kept after a quick COMMAND is exactly --at-least.
func TestRunTakesISODurations(t *testing.T) {
	db, locker := sqliteLocks(t)
	cases := []struct {
		name  string
		env   map[string]string
		args  []string
		least time.Duration
	}{
		{"flags", nil, []string{"--at-most", "PT2H", "--at-least", "PT1H30M", "--kill-grace", "PT10S", "--wait", "PT0.5S", "--jitter", "PT0S"}, 90 * time.Minute},
		{"variables", map[string]string{"SCHEDLOCK_AT_MOST": "P1D", "SCHEDLOCK_AT_LEAST": "pt20m", "SCHEDLOCK_TIMEOUT": "PT1M"}, nil, 20 * time.Minute},
		{"go form", nil, []string{"--at-most", "1h", "--at-least", "90s"}, 90 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := "iso-" + strings.ReplaceAll(tc.name, " ", "-")
			args := append([]string{"run", "--dsn", db + "?x-partition-bound=PT20S", "--name", name}, tc.args...)
			r := runCmd(t, false, tc.env, append(args, "--", "true")...)
			if r.err != nil {
				t.Fatalf("run: %v\n%s", r.err, r.stderr)
			}
			row := rowOf(t, locker, name)
			if got := row.Until.Sub(row.LockedAt); got != tc.least {
				t.Errorf("lease kept %s after the run, want --at-least %s", got, tc.least)
			}
		})
	}
}

// Months, weeks and years are refused, in one line and exit 2, before
// anything is written — from a flag, a variable or the DSN.
func TestRunRefusesCalendarDurations(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "new.db")
	cases := []struct {
		name string
		env  map[string]string
		dsn  string
		args []string
		want string
	}{
		{"flag", nil, db, []string{"--at-most", "P1M"}, `invalid argument "P1M" for "--at-most" flag: months, weeks and years have no fixed length: write days (P30D; a day is 24h), hours or minutes`},
		{"variable", map[string]string{"SCHEDLOCK_WAIT": "P1W"}, db, nil, `$SCHEDLOCK_WAIT="P1W" is not a valid --wait: months, weeks and years have no fixed length: write days (P30D; a day is 24h), hours or minutes; fix or unset`},
		{"dsn", nil, db + "?x-partition-bound=P1Y", nil, `x-partition-bound: "P1Y": months, weeks and years have no fixed length`},
		{"not a duration", nil, db, []string{"--jitter", "PT"}, `invalid argument "PT" for "--jitter" flag: not an ISO 8601 duration: write it as 90s`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"run", "--dsn", tc.dsn, "--create-table", "--name", "cal"}, tc.args...)
			r := runCmd(t, false, tc.env, append(args, "--", "touch", filepath.Join(dir, "ran"))...)
			var usage *UsageError
			if !errors.As(r.err, &usage) || ExitCode(r.err) != CodeUsage {
				t.Fatalf("error %v: want a usage error (exit 2)", r.err)
			}
			if msg := r.err.Error(); !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line saying %q", msg, tc.want)
			}
			for _, f := range []string{db, filepath.Join(dir, "ran")} {
				if _, err := os.Stat(f); err == nil {
					t.Errorf("%s was written", f)
				}
			}
		})
	}
}
