// Package cmd is the schedlock command line: Cobra commands that parse
// flags into options, call the checks and dialects packages, and render the
// result. It holds no SQL and never exits: Execute returns an error whose
// type decides the exit code in main (see the Code constants).
package cmd

import (
	"context"
	"errors"
	"os/signal"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/schedlock/schedlock/internal/dsn"
	"github.com/schedlock/schedlock/internal/iostreams"
	"github.com/schedlock/schedlock/internal/output"
)

// Environment variables read for the DSN, in order, after --dsn (see
// dsn.Resolve).
const (
	EnvDSN         = dsn.EnvDSN
	EnvDatabaseURL = dsn.EnvDatabaseURL
)

// formatsAnnotation lists, on a command, the -o formats it accepts
// (comma-separated); addSharedFlags sets it from commandFlags.
const formatsAnnotation = "schedlock/formats"

// formatsValue writes formats as a formatsAnnotation value.
func formatsValue(formats []output.Format) string {
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = string(f)
	}
	return strings.Join(names, ",")
}

// GlobalOptions are the flags several commands share: -q, -v and
// --no-color on every command, --dsn, --timeout and -o where commandFlags
// says.
type GlobalOptions struct {
	DSN     string
	DSNFile string
	Output  string
	Timeout time.Duration
	// Namespace is --namespace ("" when not given; x-namespace applies).
	Namespace string
	Quiet     bool
	Verbose   bool
	NoColor   bool
	// Color is --color: auto, always or never.
	Color string
	// LogFormat is --log-format: LogText or LogJSON.
	LogFormat string

	// Format is Output, validated for the running command.
	Format output.Format

	// TableTimeZone is --table-time-zone ("" when not given; x-time-zone
	// applies).
	TableTimeZone string
}

// Run executes schedlock with args on f, with SIGINT and SIGTERM cancelling
// the command's context. An interrupted command's error matches
// ErrInterrupted.
func Run(f *Factory, args []string) error {
	ctx, stop := context.Background(), context.CancelFunc(func() {})
	if len(interruptSignals) > 0 { // none would mean every signal
		ctx, stop = signal.NotifyContext(ctx, interruptSignals...)
	}
	defer stop()
	err := Execute(ctx, f, args)
	var exit *ExitError
	if err != nil && ctx.Err() != nil && !errors.As(err, &exit) {
		// A command that decided its own exit code (run passes on its
		// child's) keeps it; anything else a signal stopped is "interrupted".
		return &interruptedError{err: err}
	}
	return err
}

// interruptedError is a command stopped by a signal. It reads "interrupted",
// matches ErrInterrupted and unwraps to what the command returned.
type interruptedError struct{ err error }

func (e *interruptedError) Error() string        { return ErrInterrupted.Error() }
func (e *interruptedError) Unwrap() error        { return e.err }
func (e *interruptedError) Is(target error) bool { return target == ErrInterrupted }

// Execute runs schedlock with args on f under ctx. The returned error is
// scrubbed of every password the command saw; its type says the exit code:
// *UsageError, *ExitError, ErrInterrupted or context.Canceled, else 1.
func Execute(ctx context.Context, f *Factory, args []string) error {
	logs := newLogSwitch(f)
	logs.set(logFormatFromArgs(args, f.Getenv), "")
	defer logs.flush()
	g := &GlobalOptions{}
	root := NewCmdRoot(f, g)
	root.SetArgs(args)
	var cancel context.CancelFunc = func() {}
	started := false
	var fromEnv envFlags
	root.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		started = true
		var err error
		if fromEnv, err = applyFlagEnv(c, f.Getenv); err != nil {
			return err
		}
		if err := refuseExclusive(c); err != nil {
			return err
		}
		if err := checkLogFormat(c.CommandPath(), g.LogFormat); err != nil {
			return err
		}
		logs.set(g.LogFormat, c.CommandPath())
		c.Root().SetErr(f.IO.ErrOut)
		if err := g.validate(c, f); err != nil {
			return err
		}
		if g.Timeout > 0 {
			var tctx context.Context
			tctx, cancel = context.WithTimeout(c.Context(), g.Timeout)
			c.SetContext(tctx)
		}
		return nil
	}
	c, err := root.ExecuteContextC(ctx)
	cancel()
	if err == nil {
		return nil
	}
	var usage *UsageError
	var exit *ExitError
	if !started && !errors.As(err, &usage) && !errors.As(err, &exit) {
		// Cobra failed before any command ran: an unknown command or
		// arguments the command does not take.
		err = &UsageError{Err: err, Command: c.CommandPath()}
	}
	return cliError(c, f.Scrubber.Error(fromEnv.explain(err)))
}

// validate checks the global flags for command c and applies the colour
// settings: --color, --no-color and the environment's.
func (g *GlobalOptions) validate(c *cobra.Command, f *Factory) error {
	path := c.CommandPath()
	g.Format = output.Table
	if a := c.Annotations[formatsAnnotation]; a != "" && c.Flags().Lookup("output") != nil {
		var allowed []output.Format
		for _, s := range strings.Split(a, ",") {
			allowed = append(allowed, output.Format(s))
		}
		format, err := output.ParseFormat(g.Output, allowed)
		if err != nil {
			return &UsageError{Err: err, Command: path}
		}
		g.Format = format
	}
	switch {
	case g.Timeout < 0:
		return usageErrorf(path, "--timeout must not be negative, got %s", g.Timeout)
	}
	if f.Getenv != nil {
		f.IO.ReadColorEnv(f.Getenv)
	}
	switch mode := iostreams.ColorMode(g.Color); mode {
	case iostreams.ColorAuto, iostreams.ColorAlways, iostreams.ColorNever:
		f.IO.SetColorMode(mode)
	default:
		return usageErrorf(path, "--color must be auto, always or never, got %q", g.Color)
	}
	if g.NoColor {
		f.IO.DisableColor()
	}
	return nil
}

// NewCmdRoot builds the command tree; g receives the global flags.
func NewCmdRoot(f *Factory, g *GlobalOptions) *cobra.Command {
	root := &cobra.Command{
		Use:   "schedlock",
		Short: "Distributed locks that keep scheduled jobs from running twice",
		Long: `schedlock proves, inspects and uses the locks that keep a scheduled job from
running on two nodes at once: PostgreSQL advisory locks, MySQL GET_LOCK, a
portable lease table (ShedLock-compatible) on any database, and leases in
Redis, etcd or ZooKeeper (shared with ShedLock, etcdctl lock and Curator).

The database comes from --dsn, else --dsn-file, else $SCHEDLOCK_DSN, else
$SCHEDLOCK_DSN_FILE, else $DATABASE_URL. Every other flag can be set in the
environment too: --at-most as $SCHEDLOCK_AT_MOST; a flag given wins. A DSN file keeps the password out
of the command line; passwords are never shown: every DSN is printed as
user:xxxxx@host.

Exit codes: 0 ok, 1 error, 2 usage error, 3 ran fine but the answer is
negative (a check failed, a lock is held by a live owner), 130 interrupted
or declined.`,
		Example: `  # Prove locking works, on an embedded SQLite file (no server needed)
  schedlock selfcheck

  # Prove it on PostgreSQL, as JUnit for the CI pipeline
  schedlock selfcheck --dsn 'postgres://app@db1:5432/jobs' -o junit > selfcheck.xml

  # Same, DSN from the environment
  SCHEDLOCK_DSN='mysql://app@db2:3306/jobs' schedlock selfcheck

  # Password kept in a file, out of argv and the environment
  schedlock selfcheck --dsn-file /etc/schedlock/jobs.dsn

  # Run a cron job on one node of many
  schedlock run --name nightly-report --at-most 1h -- /opt/jobs/report.sh

  # The same under a Redis lock, in ShedLock's keys
  schedlock run --dsn 'redis://cache1:6379/0?x-preset=shedlock' --name nightly-report -- /opt/jobs/report.sh

  # Who holds what
  schedlock locks ls --dsn 'postgres://ops@db1:5432/jobs'`,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &UsageError{Err: withSharedFlagHint(c, err), Command: c.CommandPath()}
	})

	// --dsn, --timeout and -o belong to the commands they apply to
	// (addSharedFlags); these apply everywhere.
	pf := root.PersistentFlags()
	pf.BoolVarP(&g.Quiet, "quiet", "q", false, "print nothing on stderr but errors")
	pf.BoolVarP(&g.Verbose, "verbose", "v", false, "explain what is done on stderr")
	pf.BoolVar(&g.NoColor, "no-color", false, "no colour in output (also when $NO_COLOR is set); same as --color never")
	pf.StringVar(&g.Color, "color", string(iostreams.ColorAuto), "colour: auto (a terminal, unless $NO_COLOR or TERM=dumb), always (also into a pipe, as on a terminal, for less -R; also $CLICOLOR_FORCE=1) or never")
	_ = root.RegisterFlagCompletionFunc("color", valuesCompletion([]string{string(iostreams.ColorAuto), string(iostreams.ColorAlways), string(iostreams.ColorNever)}))
	pf.StringVar(&g.LogFormat, "log-format", LogText, "diagnostics on stderr: text (lines for people) or json (one JSON object per line); stdout is unchanged")
	_ = root.RegisterFlagCompletionFunc("log-format", valuesCompletion(logFormats))

	addVersionFlag(root)

	root.AddCommand(NewCmdVersion(f, g, nil))
	root.AddCommand(NewCmdDetect(f, g, nil))
	root.AddCommand(NewCmdSelfcheck(f, g, nil))
	root.AddCommand(NewCmdLocks(f, g, nil))
	root.AddCommand(NewCmdUnlock(f, g, nil))
	root.AddCommand(NewCmdPause(f, g, nil), NewCmdResume(f, g, nil))
	root.AddCommand(NewCmdClaims(f, g, nil))
	root.AddCommand(NewCmdRun(f, g, nil))
	root.AddCommand(NewCmdBench(f, g, nil))
	root.AddCommand(NewCmdExporter(f, g, nil))
	addDefaultCommandExamples(root)
	addSharedFlags(root, g)
	registerCompletions(root)
	addDurationHelp(root)
	addEnvHelp(root)
	return root
}

var completionExamples = map[string]string{
	"bash":       "  source <(schedlock completion bash)",
	"zsh":        "  schedlock completion zsh > \"${fpath[1]}/_schedlock\"",
	"fish":       "  schedlock completion fish | source",
	"powershell": "  schedlock completion powershell | Out-String | Invoke-Expression",
}

// addDefaultCommandExamples gives Cobra's own help and completion
// commands an Examples section like every other command.
func addDefaultCommandExamples(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		switch c.Name() {
		case "help":
			c.Example = "  schedlock help selfcheck"
		case "completion":
			c.Example = `  # Bash, for this shell
  source <(schedlock completion bash)

  # Zsh, for every new shell
  schedlock completion zsh > "${fpath[1]}/_schedlock"`
			for _, sub := range c.Commands() {
				sub.Example = completionExamples[sub.Name()]
			}
		}
	}
}
