package cmd

import (
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/schedlock/schedlock/internal/duration"
)

// durationValue is a time.Duration flag read by duration.Parse: Go's form
// (90s, 1h30m) or ISO 8601's as ShedLock writes it (PT90S, PT1H30M,
// P1D). Its variable (SCHEDLOCK_<FLAG>) goes through Set too, so it takes
// the same values.
type durationValue time.Duration

func (d *durationValue) Set(s string) error {
	v, err := duration.Parse(s)
	if err != nil {
		return err
	}
	*d = durationValue(v)
	return nil
}

// String is the value in Go's form; "0" for none, which help leaves
// unsaid as pflag leaves its own zero durations.
func (d *durationValue) String() string {
	if *d == 0 {
		return "0"
	}
	return time.Duration(*d).String()
}

func (d *durationValue) Type() string { return "duration" }

// durationVar defines a duration flag as pflag.DurationVar does, read by
// duration.Parse.
func durationVar(fl *pflag.FlagSet, p *time.Duration, name string, value time.Duration, usage string) {
	*p = value
	fl.Var((*durationValue)(p), name, usage)
}

// addDurationHelp appends duration.HelpText to the help of every command
// under root that has a duration flag.
func addDurationHelp(root *cobra.Command) {
	walkCommands(root, func(c *cobra.Command) {
		has := false
		c.LocalFlags().VisitAll(func(fl *pflag.Flag) { has = has || fl.Value.Type() == "duration" })
		if !has {
			return
		}
		if c.Long == "" {
			c.Long = c.Short + "."
		}
		c.Long = strings.TrimRight(c.Long, "\n") + "\n\n" + wrapText(duration.HelpText, 76)
	})
}
