package cmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/schedlock/schedlock/internal/output"
)

// sharedFlags says which of the flags several commands share each command
// takes, so a flag appears (in help, in completion, on the command line)
// only where it does something. -q, -v and --no-color apply everywhere and
// are persistent flags of the root instead.
type sharedFlags struct {
	// connects: --dsn and --timeout.
	connects bool
	// manyDSNs: the command defines its own repeatable --dsn and
	// --dsn-file, and no --timeout (the exporter: a server, which runs
	// until it is stopped).
	manyDSNs bool
	// namespaced: --namespace.
	namespaced bool
	// zoned: --table-time-zone.
	zoned bool
	// formats of -o/--output; none: the command has no -o.
	formats []output.Format
}

// commandFlags is sharedFlags by command path. A command not listed takes
// none of them (help, completion, the "locks" group).
var commandFlags = map[string]sharedFlags{
	"schedlock version":        {formats: output.Common},
	"schedlock detect":         {connects: true, formats: output.Common},
	"schedlock selfcheck":      {connects: true, namespaced: true, zoned: true, formats: output.ReportFormats},
	"schedlock locks ls":       {connects: true, namespaced: true, zoned: true, formats: output.Common},
	"schedlock unlock":         {connects: true, namespaced: true, zoned: true, formats: output.Common},
	"schedlock bench":          {connects: true, formats: output.Common},
	"schedlock claims":         {}, // a group: its subcommands connect
	"schedlock claims ls":      {connects: true, formats: output.Common},
	"schedlock claims release": {connects: true, formats: output.Common},
	// run's stdout is the command's: there is nothing to format.
	"schedlock run": {connects: true, namespaced: true, zoned: true},
	// Pauses and run history.
	"schedlock pause":         {connects: true, namespaced: true, zoned: true, formats: output.Common},
	"schedlock resume":        {connects: true, namespaced: true, zoned: true, formats: output.Common},
	"schedlock locks history": {connects: true, namespaced: true, formats: output.Common},
	"schedlock exporter":      {manyDSNs: true, zoned: true},
}

// addSharedFlags gives every command of the tree under root the shared
// flags commandFlags lists for it, bound to g.
func addSharedFlags(root *cobra.Command, g *GlobalOptions) {
	walkCommands(root, func(c *cobra.Command) { addSharedFlagsTo(c, g) })
}

// addSharedFlagsTo gives c the shared flags commandFlags lists for it.
func addSharedFlagsTo(c *cobra.Command, g *GlobalOptions) {
	sf, ok := commandFlags[c.CommandPath()]
	if !ok {
		return
	}
	fl := c.Flags()
	if sf.connects {
		fl.StringVar(&g.DSN, "dsn", "", "database or store URL, e.g. postgres://user@host:5432/db, redis://host:6379/0, etcd://host:2379/prefix, zk://host:2181/chroot (default $SCHEDLOCK_DSN, then $DATABASE_URL)")
		fl.StringVar(&g.DSNFile, "dsn-file", "", "read the database URL from this file (one line; chmod 600), e.g. /etc/schedlock/jobs.dsn (default $SCHEDLOCK_DSN_FILE)")
		_ = c.RegisterFlagCompletionFunc("dsn", dsnCompletion)
		_ = c.MarkFlagFilename("dsn-file")
		durationVar(fl, &g.Timeout, "timeout", 0, "give up after this long, e.g. 30s or 2m (0: no limit; run: bounds connecting and acquiring only, default 30s plus --wait)")
	}
	if sf.namespaced {
		fl.StringVar(&g.Namespace, "namespace", "", namespaceUsage(c.Name()))
		_ = c.RegisterFlagCompletionFunc("namespace", cobra.NoFileCompletions)
	}
	if sf.zoned {
		addTableTimeZoneFlag(c, g)
	}
	if len(sf.formats) > 0 {
		fl.StringVarP(&g.Output, "output", "o", string(output.Table), fmt.Sprintf("output format: %s", output.List(sf.formats)))
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		c.Annotations[formatsAnnotation] = formatsValue(sf.formats)
		_ = c.RegisterFlagCompletionFunc("output", valuesCompletion(formatNames(sf.formats)))
	}
}

// walkCommands calls fn on root and every command below it, parents first.
func walkCommands(root *cobra.Command, fn func(*cobra.Command)) {
	fn(root)
	for _, c := range root.Commands() {
		walkCommands(c, fn)
	}
}

func formatNames(formats []output.Format) []string {
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = string(f)
	}
	return names
}

// sharedFlagSpellings are the ways a shared flag is written, as pflag names
// them in "unknown flag" errors.
var sharedFlagSpellings = map[string]string{
	"'o' in -o":   "-o/--output",
	"--output":    "-o/--output",
	"--dsn":       "--dsn",
	"--dsn-file":  "--dsn-file",
	"--timeout":   "--timeout",
	"--namespace": "--namespace",
}

// withSharedFlagHint adds, to pflag's "unknown flag" error for a shared
// flag that c does not take, which flag it is and why it is absent.
func withSharedFlagHint(c *cobra.Command, err error) error {
	msg := err.Error()
	for spelling, flag := range sharedFlagSpellings {
		if !strings.HasPrefix(msg, "unknown ") || !strings.Contains(msg, spelling) {
			continue
		}
		why := "it does not connect to a database"
		if flag == "-o/--output" {
			why = "its output is not a report"
			if c.Name() == "run" {
				why = "its output is the command's own"
			}
		}
		return fmt.Errorf("%w: %s takes no %s (%s)", err, c.CommandPath(), flag, why)
	}
	return err
}
