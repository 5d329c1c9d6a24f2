package cmd

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/buildinfo"
	"github.com/schedlock/schedlock/internal/hooks"
	"github.com/schedlock/schedlock/internal/metrics"
)

// RunOps are the options of `schedlock run` that report on a run and pace
// it: hooks per event, a node_exporter textfile, and a random delay
// before acquiring. None of them changes the run: a hook or a metrics
// file that fails is one line on stderr.
type RunOps struct {
	// OnStart … OnLost are the --on-EVENT values: URLs or commands.
	OnStart, OnSuccess, OnFailure, OnSkip, OnLost []string
	// PingURL is --ping-url, a healthchecks.io-style base ping URL.
	PingURL string
	// HookTimeout bounds the hooks of each event, retries included.
	HookTimeout time.Duration
	// MetricsTextfile is --metrics-textfile.
	MetricsTextfile string
	// Jitter is --jitter: a random delay in [0, Jitter) before acquiring.
	Jitter time.Duration

	hookSet hooks.Set
	record  runRecord
	// metricsOff is set when the --metrics-textfile was refused before
	// the run: the run goes on without metrics.
	metricsOff bool
}

// runRecord is what the hooks and the metrics file learn of one run.
type runRecord struct {
	ctx     context.Context // run's context before the acquire deadline
	lock    string          // the stored name: NS::NAME in a namespace
	state   *runState
	lockErr error // WithLock's error
	started time.Time
	owner   string
	// after and stopAfter are afterCtx's context and its stop.
	after     context.Context
	stopAfter func()
}

// hookFlags are the --on-EVENT flags with their events and help.
func (o *RunOptions) hookFlags() []struct {
	event hooks.Event
	value *[]string
	help  string
} {
	return []struct {
		event hooks.Event
		value *[]string
		help  string
	}{
		{hooks.Start, &o.OnStart, "when the lock is acquired, before COMMAND starts"},
		{hooks.Success, &o.OnSuccess, "when COMMAND exited 0 and the lock was held to the end"},
		{hooks.Failure, &o.OnFailure, "when the run exits non-zero, not skipped nor lost (COMMAND failed or ran past --max-runtime, or connecting or acquiring did)"},
		{hooks.Skip, &o.OnSkip, "when the lock is held elsewhere and COMMAND does not run"},
		{hooks.Lost, &o.OnLost, "when the lock was lost while COMMAND ran (exit 113)"},
	}
}

// addRunOpsFlags gives run its reporting and pacing flags, with their
// help and examples.
func addRunOpsFlags(c *cobra.Command, o *RunOptions) {
	fl := c.Flags()
	for _, h := range o.hookFlags() {
		name := "on-" + string(h.event)
		fl.StringArrayVar(h.value, name, nil, "`URL|CMD` to report to "+h.help+": a URL gets a POST with a JSON body, anything else runs through the shell (repeatable)")
	}
	fl.StringVar(&o.PingURL, "ping-url", "", "healthchecks.io-style ping `URL`: URL/start on start, URL on success, URL/<exit code> on failure, URL/fail when lost, URL/log when skipped")
	durationVar(fl, &o.HookTimeout, "hook-timeout", hooks.DefaultTimeout, "time each event's hooks may take, retries included; a hook still running then is abandoned")
	fl.StringVar(&o.MetricsTextfile, "metrics-textfile", "", "after the run, record it in this node_exporter textfile (`PATH` ending in .prom), e.g. /var/lib/node_exporter/textfile/schedlock.prom")
	_ = c.MarkFlagFilename("metrics-textfile", "prom")
	durationVar(fl, &o.Jitter, "jitter", 0, "wait a random time below this before acquiring, so that N nodes do not all reach for the lock at :00, e.g. 30s")
	c.Long += `

Reporting: --on-start, --on-success, --on-failure, --on-skip and --on-lost
each take a URL, sent a POST with a JSON body, or a shell command, run with
SCHEDLOCK_EVENT, SCHEDLOCK_LOCK_NAME and SCHEDLOCK_EXIT_CODE set;
--ping-url takes a healthchecks.io ping URL for all five events. A hook that
fails or outlasts --hook-timeout is reported in one line: it never changes
the exit code, nor delays the run by more than --hook-timeout per event.
--metrics-textfile records each run in a node_exporter textfile. --jitter
waits a random time before taking the lock.`
	c.Example += `

  # Report start, success and failure (with the exit code) to healthchecks.io
  schedlock run --name nightly-report --ping-url https://hc-ping.com/$HC_UUID -- /opt/jobs/report.sh

  # Page someone when the lock is lost; a script gets the event in its environment
  schedlock run --name sync --on-lost 'https://alerts.example.com/hook' --on-failure '/opt/jobs/notify.sh' -- ./sync.sh

  # Metrics for node_exporter's textfile collector, and a random start within 30s
  schedlock run --name cleanup --jitter 30s --metrics-textfile /var/lib/node_exporter/textfile/schedlock.prom -- ./cleanup.sh`
}

// validateRunOps checks the reporting and pacing flags and prepares the
// hooks; every error is a usage error. The hook URLs' secrets are added
// to the scrubber, so no message shows them.
func (o *RunOptions) validateRunOps() error {
	usage := func(format string, args ...any) error { return usageErrorf(o.Command, format, args...) }
	switch {
	case o.Jitter < 0:
		return usage("--jitter must not be negative, got %s", o.Jitter)
	case o.Jitter > 0 && o.TimeoutGiven && o.Global.Timeout > 0 && o.Jitter >= o.Global.Timeout:
		return usage("--jitter (%s) must be shorter than --timeout (%s), which bounds the delay too", o.Jitter, o.Global.Timeout)
	case o.HookTimeout <= 0:
		return usage("--hook-timeout must be positive, got %s", o.HookTimeout)
	case strings.TrimSpace(o.MetricsTextfile) == "" && o.MetricsTextfile != "":
		return usage("--metrics-textfile must name a file, e.g. /var/lib/node_exporter/textfile/schedlock.prom")
	}
	if o.MetricsTextfile != "" {
		if err := metrics.CheckPath(o.MetricsTextfile); err != nil {
			return usage("--metrics-textfile: %v", err)
		}
	}
	set := hooks.Set{
		Timeout: o.HookTimeout,
		Runner: hooks.Runner{
			Client:    &http.Client{},
			UserAgent: "schedlock/" + buildinfo.Get().Version,
			Stderr:    o.IO.ErrOut,
			Unset:     o.unsetEnv(),
		},
		Warn: func(line string) { o.note(true, "%s", line) },
		Note: func(line string) { o.note(o.Global.Verbose, "%s", line) },
	}
	add := func(flag, value string, ping bool, events ...hooks.Event) error {
		h, err := hooks.Parse(value, ping)
		if err != nil {
			return usage("%s: %v", flag, err)
		}
		h.Flag = flag
		o.Factory.Scrubber.AddAll(hooks.Secrets(h)...)
		for _, ev := range events {
			set.Add(ev, h)
		}
		return nil
	}
	if o.PingURL != "" {
		if err := add("--ping-url", o.PingURL, true, hooks.Events...); err != nil {
			return err
		}
	}
	for _, hf := range o.hookFlags() {
		for _, v := range *hf.value {
			if err := add("--on-"+string(hf.event), v, false, hf.event); err != nil {
				return err
			}
		}
	}
	o.hookSet = set
	return nil
}

// jitterWait sleeps a random time in [0, --jitter), or until ctx ends
// (Ctrl-C, --timeout): then it returns ctx's error.
func (o *RunOptions) jitterWait(ctx context.Context) error {
	if o.Jitter <= 0 {
		return nil
	}
	if o.AtLeast < o.Jitter {
		o.note(!o.Global.Quiet, "--jitter %s spreads the nodes' starts over %s but --at-least is %s: a run shorter than that may run on two nodes; give --at-least %s or more", o.Jitter, o.Jitter, o.AtLeast, o.Jitter)
	}
	d := rand.N(o.Jitter)
	o.note(o.Global.Verbose, "--jitter %s: waiting %s before taking lock %q", o.Jitter, d.Round(time.Millisecond), o.Name)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// beforeCommand is called with the lock held, just before COMMAND starts:
// it notes the start and fires the start hooks.
func (o *RunOptions) beforeCommand(ctx context.Context, lease dialects.Lease) {
	o.record.started = time.Now()
	o.record.owner = lease.Owner()
	o.hookSet.Fire(context.WithoutCancel(ctx), o.hookInfo(hooks.Start, 0, time.Now()))
}

// observeRun keeps what runLocked knows of the run for afterRun.
func (o *RunOptions) observeRun(st *runState, lockErr error) {
	o.record.state, o.record.lockErr = st, lockErr
}

// reportRun is called, deferred, once the lock's namespace ns is known:
//
//	defer o.reportRun(ctx, ns)(&err)
//
// It notes the lock's stored name at once and returns the function that,
// when the run has ended with *err, reports it: metrics file first, then
// the end event's hooks. *err is left as it is. ctx is run's context
// before the acquire deadline, so that a timeout is told from Ctrl-C.
func (o *RunOptions) reportRun(ctx context.Context, ns string) func(*error) {
	o.record.ctx = ctx
	o.record.lock = dialects.NamespacedName(ns, o.Name)
	return func(err *error) { o.afterRun(ctx, *err) }
}

// afterRun reports the run that ended with err. A usage error reports
// nothing: nothing was tried. Each step is bounded, and a signal from
// now on abandons what is left (afterCtx).
func (o *RunOptions) afterRun(ctx context.Context, err error) {
	defer o.stopAfterCtx()
	var usage *UsageError
	if errors.As(err, &usage) {
		return
	}
	lock := o.record.lock
	ended := time.Now()
	code := runExitCode(ctx, err)
	st, lockErr := o.record.state, o.record.lockErr
	event := hooks.Success
	deadline := st != nil && st.started && st.outcome.Deadline
	switch {
	case st != nil && !st.acquired && errors.Is(lockErr, dialects.ErrHeld) && ctx.Err() == nil:
		event = hooks.Skip
	case deadline:
		event = hooks.Failure
	case st != nil && st.started && (st.outcome.Stopped || errors.Is(lockErr, dialects.ErrLeaseLost)):
		event = hooks.Lost
	case code != 0:
		event = hooks.Failure
	}
	after := o.afterCtx()
	if o.MetricsTextfile != "" && !o.metricsOff {
		run := metrics.Run{Lock: lock, Skipped: event == hooks.Skip, Lost: event == hooks.Lost, MaxRuntime: deadline, Started: o.record.started, Ended: ended, ExitCode: code}
		mctx, cancel := context.WithTimeout(after, metricsTimeout)
		merr := metrics.Update(mctx, o.MetricsTextfile, run)
		cancel()
		switch {
		case merr != nil && o.interruptedAfter():
			o.note(true, "--metrics-textfile %s: interrupted; the run's metrics were not written", o.MetricsTextfile)
		case merr != nil:
			o.note(true, "--metrics-textfile %s: %v; the run's metrics were not written", o.MetricsTextfile, metricsError(merr))
		case o.Global.Verbose:
			o.note(true, "--metrics-textfile %s: recorded the run of lock %q", o.MetricsTextfile, lock)
		}
	}
	if !o.interruptedAfter() {
		info := o.hookInfo(event, code, ended)
		if deadline {
			info.Reason = o.maxRuntimeReason()
		}
		o.hookSet.Fire(after, info)
	}
}

// checkMetricsFile looks at --metrics-textfile before the run, writing
// nothing: a file schedlock may not write (see metrics.Check) is refused
// in one line, and the run goes on without metrics; else a name
// node_exporter does not read is one warning.
func (o *RunOptions) checkMetricsFile(ctx context.Context) {
	path := o.MetricsTextfile
	if path == "" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, metricsTimeout)
	defer cancel()
	if err := metrics.Check(ctx, path); err != nil {
		o.metricsOff = true
		o.note(true, "--metrics-textfile %s: %v; the run goes on without metrics", path, metricsError(err))
		return
	}
	if !strings.HasSuffix(path, ".prom") {
		o.note(!o.Global.Quiet, "warning: --metrics-textfile %s does not end in .prom: node_exporter's textfile collector reads only files matching *.prom", path)
	}
}

// metricsError words a refused or failed metrics update.
func metricsError(err error) error {
	switch {
	case errors.Is(err, metrics.ErrNoDirectory):
		return fmt.Errorf("%w: create it, or point --metrics-textfile at node_exporter's --collector.textfile.directory", err)
	case errors.Is(err, metrics.ErrNotRegular):
		return fmt.Errorf("%w: schedlock replaces only a regular file of its own", err)
	case errors.Is(err, metrics.ErrForeign):
		return fmt.Errorf("%w: schedlock rewrites only a file of its own; give another PATH, or remove the file", err)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w (after %s)", err, metricsTimeout)
	}
	return err
}

// hookInfo is what the hooks of event are told.
func (o *RunOptions) hookInfo(event hooks.Event, code int, at time.Time) hooks.Info {
	host, _ := os.Hostname()
	owner := o.record.owner
	if owner == "" {
		owner = o.Owner
	}
	return hooks.Info{Event: event, Lock: o.record.lock, Owner: owner, Host: host, ExitCode: code, Started: o.record.started, Time: at}
}
