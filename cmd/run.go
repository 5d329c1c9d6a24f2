package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
	"github.com/schedlock/schedlock/internal/dsn"
	"github.com/schedlock/schedlock/internal/iostreams"
	"github.com/schedlock/schedlock/internal/output"
	"github.com/schedlock/schedlock/internal/proc"
)

// CodeLeaseLost is the exit code of `schedlock run` when the lock was not
// held for the whole run: its lease was lost (refresh refused, connection
// dropped, session killed) or was about to end with the database out of
// reach, and schedlock stopped the command. 113 lies outside schedlock's
// own codes (0-3, 130), the shells' (126, 127, 128+signal) and sysexits.h
// (64-78), so a script can tell it from the command's own exit codes.
const CodeLeaseLost = 113

// Environment variables `schedlock run` exports to its command.
const (
	// EnvLockName is the lock name (--name).
	EnvLockName = "SCHEDLOCK_LOCK_NAME"
	// EnvOwner is the owner recorded for the lock (--owner or generated).
	EnvOwner = "SCHEDLOCK_OWNER"
	// EnvFencingToken is the fencing token; set only where the strategy
	// has one (the table strategy with a token column).
	EnvFencingToken = "SCHEDLOCK_FENCING_TOKEN"
)

// DefaultKillGrace is the time between SIGTERM and SIGKILL when the lock
// is lost.
const DefaultKillGrace = 10 * time.Second

// RunOptions are the inputs of `schedlock run`.
type RunOptions struct {
	IO      *iostreams.IOStreams
	Factory *Factory
	Global  *GlobalOptions
	Command string // command path, for usage errors

	Name string
	// Key is --key: the session lock's key itself, instead of Name (see
	// sessionNameFlags.withKey).
	Key         string
	Strategy    string
	Preset      string
	Table       string
	CreateTable bool
	AtMost      time.Duration
	AtLeast     time.Duration
	Wait        time.Duration
	KillGrace   time.Duration
	// MaxRuntime is --max-runtime: COMMAND is stopped after running this
	// long (0: no bound); maxRuntimeGiven is set when it was given, so
	// that 0 given is refused rather than taken as no bound.
	MaxRuntime      time.Duration
	maxRuntimeGiven bool
	// Schedule is --schedule: the job's schedule, recorded with its runs
	// (see dialects.ParseSchedule); empty when none.
	Schedule      string
	scheduleGiven bool
	atMostGiven   bool
	// PartitionBound is --partition-bound, else x-partition-bound (session
	// strategy); 0 means the default.
	PartitionBound time.Duration
	SkippedCode    int
	Owner          string
	// TimeoutGiven is set when --timeout was on the command line; without
	// it connecting and acquiring are bounded by DefaultRunTimeout (plus
	// --wait).
	TimeoutGiven bool
	// KeepEnv passes the DSN variables on to COMMAND (see unsetEnv).
	KeepEnv bool
	// History is --history: runs kept per name in the run table (0: off).
	History      int
	historyGiven bool
	history      *runHistory // where the run is recorded; nil: nowhere

	// partitionBoundGiven is set when --partition-bound was given: 0 given
	// is refused like any bound out of range, not taken as the default.
	partitionBoundGiven bool

	// sessionHolder describes the session holding the lock (see
	// sessionHolderOf); nil where there is none to describe.
	sessionHolder func(context.Context) string
	// blockers names the sessions keeping the lock table from the run
	// (see runBlockers); nil before connecting.
	blockers func(context.Context) string

	// Argv is the command and its arguments (everything after --).
	Argv []string

	// SessionNames are --session-names and --session-key.
	SessionNames sessionNameFlags

	RunOps
}

// NewCmdRun builds `schedlock run`. runF replaces the run function in
// tests.
func NewCmdRun(f *Factory, g *GlobalOptions, runF func(context.Context, *RunOptions) error) *cobra.Command {
	opts := &RunOptions{IO: f.IO, Factory: f, Global: g}
	c := &cobra.Command{
		Use:   "run --name NAME [flags] -- COMMAND [ARG...]",
		Short: "Run a command under a distributed lock, on one node of many",
		Long: `run takes the lock NAME, runs COMMAND while it holds it, and releases it when
COMMAND ends. The same cron job or timer on N nodes then runs on one of them:
the others find the lock held, print one line naming the holder and exit 0
(--skipped-exit-code changes that), or wait for it with --wait.

COMMAND gets stdin, stdout and stderr as they are, and the environment
variables SCHEDLOCK_LOCK_NAME, SCHEDLOCK_OWNER and, where the strategy has
one, SCHEDLOCK_FENCING_TOKEN. SCHEDLOCK_DSN, SCHEDLOCK_DSN_FILE and
DATABASE_URL, which may hold a password, are removed from its environment
unless --keep-env; --dsn-file keeps the password out of argv too. It runs in a process group of its own; signals
sent to schedlock (INT, TERM, HUP, QUIT) are passed to that group — except
one ignored when schedlock started (nohup's HUP), which stays ignored — and the
lock is released after COMMAND has exited, with anything it left running in
its group stopped first. If schedlock itself is killed, Linux kills COMMAND
with it.

Strategies: session (the database's own named lock on a pinned connection:
freed at once if schedlock dies, no fencing token) or table (a lease table:
lease of --at-most refreshed every third of it, fencing token, survives
connection blips, but a crashed holder keeps the lock until its lease ends).
The default is what the database recommends (see 'schedlock detect');
--table, --preset or --create-table select the table strategy. A SQLite
file that does not exist is refused unless --create-table.

If the lock is lost while COMMAND runs — refresh refused, connection gone,
session killed — or its lease is about to end with the database out of reach,
COMMAND's process group gets SIGTERM, SIGKILL after --kill-grace, and run
exits 113: COMMAND never runs past the end of the lease. A lost session lock
was freed by the server already, so COMMAND is killed at once.

--max-runtime D stops COMMAND once it has run D, the same way, releases the
lock and exits 124: a hung job cannot hold the lock for ever.

Exit codes: COMMAND's own; 0 (or --skipped-exit-code) when the lock is held
elsewhere; 113 lease lost; 124 --max-runtime passed; 126 COMMAND not
executable; 127 COMMAND not found;
1 error (also when connecting and acquiring took longer than --timeout);
2 usage error; 130 interrupted.

--timeout bounds connecting and acquiring, not COMMAND; its default for run
is 30s plus --wait, so a frozen database cannot hold a cron slot for ever
(--timeout 0: no bound). See docs/run.md.`,
		Example: `  # Nightly report on every node, run on one: crontab line
  0 2 * * * schedlock run -q --dsn 'postgres://app@db1/jobs' --name nightly-report --at-most 1h -- /opt/jobs/report.sh

  # Lease table with a fencing token; keep the lock 5 minutes at least
  schedlock run --name invoices --strategy table --create-table --at-most 20m --at-least 5m -- ./invoices.sh

  # The same on etcd (or redis://, zk://): a lease with a fencing token
  schedlock run --dsn 'etcd://etcd1:2379,etcd2:2379,etcd3:2379/jobs' --name nightly-report --at-most 1h -- /opt/jobs/report.sh

  # Wait up to 10 minutes for the lock instead of skipping
  schedlock run --name backup --wait 10m -- pg_dump -Fc -f /backup/jobs.dump jobs

  # Give up after 10s if the database does not answer (default 30s)
  schedlock run --timeout 10s --name cleanup -- ./cleanup.sh

  # Password in a root-only file; COMMAND sees neither it nor $DATABASE_URL
  schedlock run --dsn-file /etc/schedlock/jobs.dsn --name sync -- ./sync.sh

  # A job that needs the database URL itself
  DATABASE_URL=postgres://app@db1/jobs schedlock run --keep-env --name migrate -- ./migrate.sh

  # Tell "skipped" from success in a wrapper script
  schedlock run --name sync --skipped-exit-code 99 -- ./sync.sh; echo "exit $?"`,
		Args:        cobra.ArbitraryArgs,
		Annotations: map[string]string{formatsAnnotation: string(output.Table)},
		RunE: func(c *cobra.Command, args []string) error {
			opts.Command = c.CommandPath()
			opts.Argv = args
			opts.TimeoutGiven = c.Flags().Changed("timeout")
			opts.historyGiven = c.Flags().Changed("history")
			opts.partitionBoundGiven = c.Flags().Changed("partition-bound")
			opts.maxRuntimeGiven = c.Flags().Changed("max-runtime")
			opts.scheduleGiven = c.Flags().Changed("schedule")
			opts.atMostGiven = c.Flags().Changed("at-most")
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return runRun(c.Context(), opts)
		},
	}
	fl := c.Flags()
	// Everything from the first argument on is the command's, even without
	// "--": its own flags must never be taken for schedlock's.
	fl.SetInterspersed(false)
	fl.StringVar(&opts.Name, "name", "", "lock name (required unless --key), e.g. nightly-report")
	_ = c.RegisterFlagCompletionFunc("name", lockNameCompletion(f, g, false, ""))
	fl.StringVar(&opts.Key, "key", "", "session strategy: lock this key itself instead of --name: a PostgreSQL advisory key (a bigint, as locks ls shows it) or a GET_LOCK name")
	addSessionNameFlags(c, &opts.SessionNames)
	fl.StringVar(&opts.Strategy, "strategy", "", "session or table (alias lease; default: what the database recommends)")
	fl.StringVar(&opts.Preset, "preset", "", "lock-table layout: "+strings.Join(dialects.Presets(), ", ")+" (table strategy; default schedlock)")
	fl.StringVar(&opts.Table, "table", "", "lock table name, optionally schema.table (table strategy; default the preset's)")
	_ = c.RegisterFlagCompletionFunc("table", lockTableCompletion(f, g, ""))
	fl.BoolVar(&opts.CreateTable, "create-table", false, "create the lock table if it does not exist (table strategy)")
	durationVar(fl, &opts.AtMost, "at-most", dialects.DefaultAtMost, "lease length: how long a crashed holder keeps the lock; refreshed every third of it (table strategy)")
	durationVar(fl, &opts.AtLeast, "at-least", 0, "keep the lock at least this long after it was taken, even when COMMAND ends sooner")
	durationVar(fl, &opts.Wait, "wait", 0, "wait up to this long for a held lock (default: try once)")
	durationVar(fl, &opts.MaxRuntime, "max-runtime", 0, "stop COMMAND once it has run this long, as when the lock is lost (SIGTERM, SIGKILL after --kill-grace), release the lock and exit 124, e.g. 2h or PT2H (default: no bound)")
	durationVar(fl, &opts.KillGrace, "kill-grace", DefaultKillGrace, "time between SIGTERM and SIGKILL when a table lease is lost or the command left processes behind; under half of --at-most (a lost session lock kills at once)")
	durationVar(fl, &opts.PartitionBound, "partition-bound", 0, "session strategy: the server frees the lock within this of the holder being cut off silently, and the command is stopped before (default 30s, or x-partition-bound)")
	fl.IntVar(&opts.SkippedCode, "skipped-exit-code", 0, "exit code when the lock is held elsewhere and COMMAND did not run")
	fl.StringVar(&opts.Owner, "owner", "", "owner recorded for the lock (default host:pid:random;hb=EVERY/LEASE, which declares its refreshes so that a stopped holder shows as stale)")
	addRunHistoryFlags(fl, opts)
	// A cron line or @every is free text; the descriptors are a set.
	_ = c.RegisterFlagCompletionFunc("schedule", cobra.FixedCompletions([]string{"@hourly", "@daily", "@weekly", "@monthly", "@yearly"}, cobra.ShellCompDirectiveNoFileComp))
	fl.BoolVar(&opts.KeepEnv, "keep-env", false, "pass $SCHEDLOCK_DSN, $SCHEDLOCK_DSN_FILE and $DATABASE_URL on to COMMAND (default: removed, they may hold a password)")
	addRunOpsFlags(c, opts)
	return c
}

// runRun is `schedlock run`: resolve, connect, choose the locker, then run
// the command under the lock.
func runRun(ctx context.Context, o *RunOptions) (err error) {
	if err := o.useKey(); err != nil {
		return err
	}
	if err := o.validate(); err != nil {
		return err
	}
	target, err := o.target()
	if err != nil {
		return err
	}
	ns, err := o.Global.namespace(o.Command, target)
	if err != nil {
		return err
	}
	if err := o.SessionNames.apply(target, ns, o.Command); err != nil {
		return err
	}
	// On ShedLock's Redis layout the namespace is the environment, the
	// table's (job-lock:NS:NAME); nameNS is what the lock name keeps.
	table, nameNS, err := placeNamespace(o.Command, target, o.table(target), ns)
	if err != nil {
		return err
	}
	stored := dialects.NamespacedName(nameNS, o.Name)
	// The connections carry the stored name: `locks ls` reads it back.
	target.NameConnections(sqlkit.RunApplication(stored))
	defer o.reportRun(ctx, ns)(&err)
	if err := o.existingFile(target); err != nil {
		return err
	}
	o.checkMetricsFile(ctx)
	ctx, cancel := o.withAcquireDeadline(ctx)
	defer cancel()
	if err := o.jitterWait(ctx); err != nil {
		return o.dbError(ctx, err)
	}
	db, err := target.Connect(ctx)
	if err != nil {
		return o.dbError(ctx, err)
	}
	defer o.closeBackend(db)
	locker, err := o.locker(ctx, db, target, table)
	if err != nil {
		return err
	}
	// The lock connections close with the run, not when they have idled
	// for a while (a session locker's).
	if c, ok := locker.(io.Closer); ok {
		defer func() { _ = c.Close() }()
	}
	o.warnRisks(db)
	switch {
	case ns != "" && nameNS == "":
		o.note(o.Global.Verbose, "namespace %q: table %s keeps it (%s preset); the lock is stored as %q there", ns, table.Name, table.Preset, stored)
	case ns != "":
		o.note(o.Global.Verbose, "namespace %q: the lock is stored as %q", ns, stored)
	}
	o.sessionHolder = sessionHolderOf(db, locker, stored)
	o.blockers = runBlockers(db, table)
	o.prepareHistory(db, locker, nameNS)
	o.warnUnrecordedSchedule()
	return o.runLocked(ctx, dialects.WithNamespace(locker, nameNS))
}

// validate checks the flags that need no database; every error is a usage
// error.
func (o *RunOptions) validate() error {
	if _, err := o.Global.tableTimeZone(o.Command, nil); err != nil {
		return err
	}
	usage := func(format string, args ...any) error { return usageErrorf(o.Command, format, args...) }
	switch {
	case len(o.Argv) == 0:
		return usage("no command to run: give it after --, e.g. schedlock run --name nightly -- ./report.sh")
	case o.Name == "":
		return usage("--name is required and must not be empty, e.g. --name nightly-report (or --key KEY for a session lock known by its key)")
	case o.AtMost <= 0:
		return usage("--at-most must be positive, got %s", o.AtMost)
	case o.AtLeast < 0:
		return usage("--at-least must not be negative, got %s", o.AtLeast)
	case o.Wait < 0:
		return usage("--wait must not be negative, got %s", o.Wait)
	case (o.PartitionBound != 0 || o.partitionBoundGiven) && (o.PartitionBound < dsn.MinPartitionBound || o.PartitionBound > dsn.MaxPartitionBound):
		return usage("--partition-bound must lie between %s and %s, got %s", dsn.MinPartitionBound, dsn.MaxPartitionBound, o.PartitionBound)
	case o.KillGrace < 0:
		return usage("--kill-grace must not be negative, got %s", o.KillGrace)
	case o.maxRuntimeGiven && o.MaxRuntime <= 0:
		return usage("--max-runtime must be positive, got %s: give the longest COMMAND may run, e.g. --max-runtime 2h, or leave it out for no bound", o.MaxRuntime)
	case o.AtLeast > o.AtMost:
		return usage("--at-least (%s) must not exceed --at-most (%s)", o.AtLeast, o.AtMost)
	case o.SkippedCode < 0 || o.SkippedCode > 255:
		return usage("--skipped-exit-code must be between 0 and 255, got %d", o.SkippedCode)
	}
	if err := dialects.CheckName(o.Name); err != nil {
		return &UsageError{Err: fmt.Errorf("--name: %w", err), Command: o.Command}
	}
	if err := o.validateHistory(); err != nil {
		return err
	}
	if err := o.validateSchedule(); err != nil {
		return err
	}
	if _, err := o.options().Normalize(); err != nil {
		return &UsageError{Err: err, Command: o.Command}
	}
	if err := o.validateRunOps(); err != nil {
		return err
	}
	if o.Strategy != "" {
		s, err := dialects.ParseStrategy(o.Strategy)
		if err != nil {
			return &UsageError{Err: fmt.Errorf("--strategy: %w", err), Command: o.Command}
		}
		if s == dialects.StrategySession && (o.Preset != "" || o.Table != "" || o.CreateTable) {
			return usage("--table, --preset and --create-table apply to the table strategy, not --strategy session")
		}
	}
	return nil
}

// options are the lock options the flags ask for.
func (o *RunOptions) options() dialects.Options {
	return dialects.Options{AtMost: o.AtMost, AtLeast: o.AtLeast, Wait: o.Wait, Owner: o.Owner}
}

// target resolves and parses the DSN.
func (o *RunOptions) target() (*dsn.DSN, error) {
	d, _, err := resolveTarget(o.Factory, o.Global, o.Command, nil)
	return d, err
}

// table is the lock table of --preset and --table, else x-preset and
// x-table.
func (o *RunOptions) table(target *dsn.DSN) dialects.Table {
	return dialects.Table{
		Preset: firstNonEmpty(o.Preset, target.Options[dsn.OptPreset]),
		Name:   firstNonEmpty(o.Table, target.Options[dsn.OptTable]),
	}
}

// locker picks the strategy (flag, then x-strategy, then table when a
// table is named, then the database's recommendation) and returns its
// locker on table (o.table, the namespace placed), creating the lock
// table first when asked to.
func (o *RunOptions) locker(ctx context.Context, db dialects.Backend, target *dsn.DSN, table dialects.Table) (dialects.Locker, error) {
	var strategy dialects.Strategy
	why := ""
	switch s := firstNonEmpty(o.Strategy, target.Options[dsn.OptStrategy]); {
	case s != "":
		strategy, why = dialects.StrategyOf(s), "asked for"
	case table != (dialects.Table{}) || o.CreateTable:
		strategy, why = dialects.StrategyTable, "a lock table was named"
	default:
		strategy, why = db.Recommend()
	}
	if strategy == dialects.StrategySession && (o.Preset != "" || o.Table != "" || o.CreateTable || o.Global.TableTimeZone != "") {
		return nil, usageErrorf(o.Command, "--table, --preset, --table-time-zone and --create-table apply to the table strategy, not the session strategy the DSN asks for")
	}
	zone, err := o.Global.tableTimeZone(o.Command, target)
	if err != nil {
		return nil, err
	}
	table.TimeZone = zone
	if strategy == dialects.StrategyTable && 2*o.KillGrace >= o.AtMost {
		return nil, usageErrorf(o.Command, "--kill-grace (%s) must be under half of --at-most (%s), so that the command can be stopped before its lease ends", o.KillGrace, o.AtMost)
	}
	if err := o.sessionNamesApply(db, target, strategy); err != nil {
		return nil, err
	}
	locker, err := db.Locker(strategy, table)
	if err != nil {
		if errors.Is(err, dialects.ErrInvalid) || errors.Is(err, dialects.ErrUnsupported) {
			return nil, &UsageError{Err: target.Scrub(err), Command: o.Command}
		}
		return nil, target.Scrub(err)
	}
	if err := dialects.CheckLockName(locker, o.Name); err != nil {
		return nil, &UsageError{Err: fmt.Errorf("%s: %w", o.nameFlag(), err), Command: o.Command}
	}
	bound := o.PartitionBound
	if bound == 0 {
		bound = target.Options.PartitionBound()
	}
	if !sqlkit.ApplyPartitionBound(locker, bound) && o.PartitionBound != 0 {
		return nil, usageErrorf(o.Command, "--partition-bound applies to the session strategy, not the %s strategy", strategy)
	}
	if o.CreateTable {
		tl, ok := locker.(dialects.LeaseLocker)
		if !ok {
			return nil, usageErrorf(o.Command, "--create-table needs the table strategy")
		}
		// A store whose keys need no container (Redis, etcd) has nothing
		// to create.
		if c, ok := tl.(dialects.TableCreator); ok {
			if err := c.CreateTable(ctx); err != nil {
				return nil, o.dbError(ctx, target.Scrub(err))
			}
		}
		if err := o.createRunTable(ctx, tl); err != nil {
			return nil, o.dbError(ctx, target.Scrub(err))
		}
	}
	o.warnMaxRuntime(strategy)
	o.note(o.Global.Verbose, "lock %q on %s: %s strategy (%s)", o.Name, target.Redacted(), strategy, why)
	return dialects.WithPauseCheck(db, locker, table), nil
}

// runState is what happened inside the lock, for the exit code.
type runState struct {
	acquired bool
	started  bool
	startErr error // the command could not be started
	outcome  proc.Outcome
	stopped  error // why the command was stopped (Outcome.Stopped)
	until    time.Time
	// refreshErr is the lease's last refresh error when it was stopped.
	refreshErr error
	// lease, ranFrom and ranTo are the run's, for its history.
	lease          dialects.Lease
	ranFrom, ranTo time.Time
}

// runLocked runs the command under the lock. SIGINT/SIGTERM cancel ctx:
// until the command has started that aborts the run; from then on the lock
// lives on a context detached from ctx, the signals go to the command, and
// the lock is released once the command has exited.
func (o *RunOptions) runLocked(ctx context.Context, locker dialects.Locker) error {
	sigs := make(chan os.Signal, 8)
	if len(forwardedSignals) > 0 {
		signal.Notify(sigs, forwardedSignals...)
		defer signal.Stop(sigs)
	}

	lockCtx, cancelLock := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancelLock(nil)
	detach := context.AfterFunc(ctx, func() { cancelLock(context.Cause(ctx)) })
	defer detach()

	st := &runState{}
	finished := make(chan struct{})
	defer close(finished)
	err := dialects.WithLock(lockCtx, &waitNotice{Locker: locker, o: o}, o.Name, o.options(), func(runCtx context.Context, lease dialects.Lease) error {
		st.acquired = true
		// Once the lease has ended there is nothing left to release: a
		// release still waiting on an unreachable database is abandoned.
		go func() {
			select {
			case <-lease.Done():
				cancelLock(lease.Err())
			case <-finished:
			}
		}()
		if !detach() {
			return nil // ctx ended first: the command is not started
		}
		o.supervise(runCtx, lease, sigs, st)
		return nil
	})
	if st.started {
		// A session lock released before --at-least is still held by this
		// process, which stays until the lock is freed or a signal ends it.
		select {
		case <-dialects.Freed(st.lease):
		case <-sigs:
		}
	}
	if !st.acquired {
		err = o.withHolder(lockCtx, locker, o.Name, err)
	}
	o.observeRun(st, err)
	res := o.result(ctx, err, st)
	o.recordRun(ctx, st, res)
	return res
}

// supervise starts the command with the lock's environment and watches it
// against the lease until it has exited.
func (o *RunOptions) supervise(runCtx context.Context, lease dialects.Lease, sigs chan os.Signal, st *runState) {
	env := []string{EnvLockName + "=" + lease.Name(), EnvOwner + "=" + lease.Owner()}
	token, hasToken := lease.Token()
	if hasToken {
		env = append(env, EnvFencingToken+"="+strconv.FormatInt(token, 10))
	}
	if o.Global.Verbose {
		detail := "owner " + lease.Owner()
		if hasToken {
			detail += fmt.Sprintf(", token %d", token)
		}
		if u := lease.Until(); !u.IsZero() {
			detail += ", lease until " + u.UTC().Format(time.RFC3339)
		}
		o.note(true, "acquired lock %q (%s)", o.Name, detail)
	}
	o.beforeCommand(runCtx, lease)
	child, err := proc.Start(o.Argv, env, proc.IO{In: o.IO.In, Out: o.IO.Out, Err: rawStderr(o.IO.ErrOut), Unset: o.unsetEnv()})
	if err != nil {
		st.startErr = err
		return
	}
	st.started, st.lease, st.ranFrom = true, lease, time.Now()
	// A session lock ends with its connection: once it is lost the server
	// has already freed it, so the command is killed at once. --kill-grace
	// applies where a lease still covers the command (table strategy), and
	// to what a command that exited cleanly left running in its group.
	deadline, stopDeadline := o.deadline()
	st.outcome = proc.Supervise(child, proc.Watch{Lost: runCtx.Done(), Until: lease.Until, Grace: o.KillGrace, KillOnLoss: lease.Until().IsZero(), Signals: sigs, Deadline: deadline})
	stopDeadline()
	st.ranTo = time.Now()
	o.afterCtx() // from here on a signal ends the run's reporting
	if st.outcome.Deadline {
		return
	}
	if st.outcome.Stopped {
		st.stopped = context.Cause(runCtx)
		st.until = lease.Until()
		st.refreshErr = dialects.LastRefreshError(lease)
		return
	}
	if st.outcome.Leftovers {
		o.note(!o.Global.Quiet, "%s left processes running in its process group; they were stopped before the lock was released", o.Argv[0])
	}
}

// result turns the run into the error main maps to the exit code. err is
// WithLock's: the acquire error, or the release error (the callback
// itself never fails). Release errors are quoted, not wrapped: a wrapped
// context.Canceled would turn the exit code into 130.
func (o *RunOptions) result(ctx context.Context, err error, st *runState) error {
	cmdName := o.Argv[0]
	switch {
	case !st.acquired:
		return o.acquireError(ctx, err)
	case st.startErr != nil:
		var se *proc.StartError
		code := CodeError
		if errors.As(st.startErr, &se) {
			code = se.Code
		}
		return &ExitError{Code: code, Err: withRelease(st.startErr, err, o.Name)}
	case !st.started:
		return interruption(fmt.Sprintf("lock %q was acquired, then released without starting %s", o.Name, cmdName))
	case st.outcome.Deadline:
		return o.maxRuntimeError(st, err)
	case st.outcome.Stopped:
		return o.stoppedError(st)
	}
	code := st.outcome.ExitCode
	switch {
	case err == nil:
		o.note(o.Global.Verbose, "released lock %q", o.Name)
		if code == 0 {
			return nil
		}
		return &ExitError{Code: code, Err: fmt.Errorf("%s exited with code %d", cmdName, code)}
	case errors.Is(err, dialects.ErrLeaseLost):
		return &ExitError{Code: CodeLeaseLost, Err: fmt.Errorf("%s exited with code %d, but lock %q was lost while it ran: %v", cmdName, code, o.Name, err)}
	default:
		if code == 0 {
			code = CodeError
		}
		return &ExitError{Code: code, Err: fmt.Errorf("%s exited with code %d, but releasing lock %q failed (it frees itself when its lease ends): %v", cmdName, st.outcome.ExitCode, o.Name, err)}
	}
}

// acquireError explains a failure before the lock was held: skipped
// (held elsewhere), interrupted, timed out, or a plain error.
func (o *RunOptions) acquireError(ctx context.Context, err error) error {
	var held *dialects.HeldError
	switch {
	case timedOut(ctx):
		return o.timeoutError(nil)
	case ctx.Err() != nil:
		return interruption(fmt.Sprintf("gave up on lock %q", o.Name))
	case errors.As(err, &held):
		return o.skipped(heldText(held), errors.Is(err, dialects.ErrPaused))
	case errors.Is(err, dialects.ErrHeld):
		return o.skipped(fmt.Sprintf("lock %q is held", o.Name), errors.Is(err, dialects.ErrPaused))
	case errors.Is(err, dialects.ErrInvalid):
		return &UsageError{Err: err, Command: o.Command}
	}
	return err
}

// dbError is err from connecting or preparing, said as an interruption
// when SIGINT/SIGTERM caused it.
func (o *RunOptions) dbError(ctx context.Context, err error) error {
	switch {
	case timedOut(ctx):
		return o.timeoutError(err)
	case ctx.Err() != nil:
		return interruption(fmt.Sprintf("gave up before lock %q was acquired: %v", o.Name, err))
	}
	return err
}

// skipped is the result of a run that did not get the lock. A pause is
// refused at once, --wait or not, so only a held lock says it waited.
func (o *RunOptions) skipped(why string, paused bool) error {
	if o.Wait > 0 && !paused {
		why += fmt.Sprintf(" (waited %s)", o.Wait)
	}
	if o.SkippedCode == 0 && o.Global.Quiet {
		return nil
	}
	return &ExitError{Code: o.SkippedCode, Err: fmt.Errorf("skipped %s: %s", o.Argv[0], why)}
}

// withRelease adds a failed release to err.
func withRelease(err, release error, name string) error {
	if release == nil {
		return fmt.Errorf("%w (lock %q released)", err, name)
	}
	return fmt.Errorf("%w; releasing lock %q failed: %v", err, name, release)
}

// note prints one "schedlock: …" line on stderr when show is true.
func (o *RunOptions) note(show bool, format string, args ...any) {
	if show {
		fmt.Fprintln(o.IO.ErrOut, o.Factory.Scrubber.String("schedlock: "+cliText(fmt.Sprintf(format, args...))))
	}
}

// interruption is a run stopped by SIGINT/SIGTERM; it matches
// ErrInterrupted.
type interruption string

func (e interruption) Error() string { return string(e) }

// Is makes errors.Is(err, ErrInterrupted) true.
func (e interruption) Is(target error) bool { return target == ErrInterrupted }

// waitNotice is a Locker that, with --wait, tries once and tells a person
// watching that it is waiting (and for whom) before it waits.
type waitNotice struct {
	dialects.Locker
	o *RunOptions
}

func (w *waitNotice) Acquire(ctx context.Context, name string, opts dialects.Options) (dialects.Lease, error) {
	o := w.o
	show := o.Global.Verbose || (o.IO.IsStderrTTY() && !o.Global.Quiet)
	if opts.Wait <= 0 || !show {
		return w.Locker.Acquire(ctx, name, opts)
	}
	start := time.Now()
	once := opts
	once.Wait = 0
	lease, err := w.Locker.Acquire(ctx, name, once)
	if err == nil || !errors.Is(err, dialects.ErrHeld) || errors.Is(err, dialects.ErrPaused) {
		return lease, err
	}
	holder := ""
	var held *dialects.HeldError
	if errors.As(o.withHolder(ctx, w.Locker, name, err), &held) && held.Holder != "" {
		holder = " by " + held.Holder
	}
	o.note(true, "lock %q is held%s; waiting up to %s…", name, holder, opts.Wait)
	opts.Wait -= time.Since(start)
	if opts.Wait <= 0 {
		return nil, err
	}
	return w.Locker.Acquire(ctx, name, opts)
}
