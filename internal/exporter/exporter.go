package exporter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// Defaults of Options.
const (
	// DefaultCache is how long one read of the databases answers scrapes.
	DefaultCache = 10 * time.Second
	// DefaultReadTimeout bounds one read of one database.
	DefaultReadTimeout = 10 * time.Second
	// DefaultMaxHolders is how many holder series one target exports
	// before the rest are folded into one (see Options.MaxHolders).
	DefaultMaxHolders = 500
)

// Options tune an Exporter; zero values take the defaults above.
type Options struct {
	// Cache is how long a read of the databases is reused: scrapes and
	// page loads within it cost the databases nothing.
	Cache time.Duration
	// ReadTimeout bounds the read of one database, connecting included.
	ReadTimeout time.Duration
	// MaxHolders caps the schedlock_lock_holder series of one target: the
	// holders of the locks past the first MaxHolders (in name order) are
	// folded into one series whose value counts them.
	MaxHolders int
	// Logger receives one line per failed read; nil: slog.Default().
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Cache <= 0 {
		o.Cache = DefaultCache
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = DefaultReadTimeout
	}
	if o.MaxHolders <= 0 {
		o.MaxHolders = DefaultMaxHolders
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Exporter reads its targets' locks, at most once per Options.Cache, and
// serves them (Handler). It is safe for concurrent use.
type Exporter struct {
	opts       Options
	targets    []*targetState
	labelNames []string // extra label names, sorted

	mu   sync.Mutex // held while reading, so concurrent scrapes share one read
	snap *Snapshot
	// pageRuns are the status page's recent runs of pageRunsOf's locks.
	pageRuns   map[runKey][]dialects.Run
	pageRunsOf *Snapshot
}

// Rediscover is how often a target's lock tables are looked for again;
// between, each read reads the tables found last (ListOptions.Resolved):
// one query per table or lock view.
const Rediscover = 5 * time.Minute

// targetState is a target with its open source and counters.
type targetState struct {
	Target
	src    Source
	reads  uint64
	errors uint64
	// tables are the tables the last full listing found, at found; nil
	// until one succeeded, and again after a failure.
	tables []dialects.Table
	found  time.Time
}

// Snapshot is one read of every target.
type Snapshot struct {
	// Taken is when the read started (host clock).
	Taken   time.Time
	Targets []TargetSnapshot
}

// TargetSnapshot is one target's part of a Snapshot.
type TargetSnapshot struct {
	Name   string
	Labels []string // values of the exporter's extra label names, in order
	// Up is whether the read succeeded; Err and Reason say why not
	// (Reason: connect, privilege, no_table, timeout or error).
	Up     bool
	Err    error
	Reason string
	// Duration is how long the read took.
	Duration time.Duration
	// Reads and Errors count the reads of this target and the failed ones
	// since the exporter started.
	Reads, Errors uint64
	// Locks are the listed locks, namespaces split off (nil when down).
	Locks []dialects.LockEntry
	// Notes are the listing's notes.
	Notes []string
}

// New returns an exporter of targets (see CheckTargets).
func New(targets []Target, opts Options) (*Exporter, error) {
	if err := CheckTargets(targets); err != nil {
		return nil, err
	}
	e := &Exporter{opts: opts.withDefaults(), labelNames: extraLabelNames(targets)}
	for _, t := range targets {
		t.List.All = true
		e.targets = append(e.targets, &targetState{Target: t})
	}
	return e, nil
}

// Options are the exporter's options with their defaults applied.
func (e *Exporter) Options() Options { return e.opts }

// Snapshot returns the newest read, reading every target again when it
// is older than Options.Cache. Concurrent callers share one read. The
// read does not end with ctx (a scrape that gives up leaves a read that
// the next one uses); Options.ReadTimeout bounds it.
func (e *Exporter) Snapshot(ctx context.Context) *Snapshot {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.snap != nil && time.Since(e.snap.Taken) < e.opts.Cache {
		return e.snap
	}
	ctx = context.WithoutCancel(ctx)
	snap := &Snapshot{Taken: time.Now(), Targets: make([]TargetSnapshot, len(e.targets))}
	var wg sync.WaitGroup
	for i, t := range e.targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			snap.Targets[i] = e.read(ctx, t)
		}()
	}
	wg.Wait()
	e.snap = snap
	return snap
}

// read lists t's locks once, opening its source first when it has none,
// and closes the source after a failure so that the next read reconnects.
func (e *Exporter) read(ctx context.Context, t *targetState) (ts TargetSnapshot) {
	ctx, cancel := context.WithTimeout(ctx, e.opts.ReadTimeout)
	defer cancel()
	start := time.Now()
	ts = TargetSnapshot{Name: t.Name, Labels: e.labelValues(t.Labels)}
	t.reads++
	defer func() {
		if p := recover(); p != nil {
			ts.Up, ts.Locks, ts.Err, ts.Reason = false, nil, fmt.Errorf("read panicked: %v", p), "error"
		}
		ts.Duration = time.Since(start)
		if ts.Err != nil {
			t.errors++
			if t.src != nil {
				_ = t.src.Close()
				t.src = nil
			}
			e.opts.Logger.Warn("scrape failed", "dsn", t.Name, "reason", ts.Reason, "err", oneLine(ts.Err.Error()))
		}
		ts.Reads, ts.Errors = t.reads, t.errors
	}()
	if t.src == nil {
		src, err := t.Open(ctx)
		if err != nil {
			ts.Err, ts.Reason = err, reasonOf(err, "connect")
			return ts
		}
		t.src = src
	}
	opts := t.List
	if t.tables != nil && time.Since(t.found) < Rediscover {
		opts.Tables, opts.Resolved = t.tables, true
	}
	listing, err := t.src.ListLocks(ctx, opts)
	if err != nil {
		t.tables = nil
		ts.Err, ts.Reason = err, reasonOf(err, "error")
		return ts
	}
	if !opts.Resolved && len(listing.Tables) > 0 {
		t.tables, t.found = listing.Tables, time.Now()
	}
	ts.Up = true
	ts.Locks = dialects.ApplyNamespace(listing.Locks, "")
	ts.Notes = listing.Notes
	return ts
}

// deniedWords are how servers refuse a read the user has no right to,
// where the backend does not wrap it as dialects.ErrPrivilege: PostgreSQL's
// "permission denied for table" (SQLSTATE 42501), MySQL's "SELECT command
// denied" and "Access denied", Redis's NOPERM.
var deniedWords = []string{"permission denied", "command denied", "Access denied", "NOPERM", "SQLSTATE 42501"}

// reasonOf is the reason label of a failed read: what kind of error err
// is, else fallback.
func reasonOf(err error, fallback string) string {
	denied := false
	for _, w := range deniedWords {
		denied = denied || strings.Contains(err.Error(), w)
	}
	switch {
	case errors.Is(err, dialects.ErrPrivilege) || denied:
		return "privilege"
	case errors.Is(err, dialects.ErrNoTable):
		return "no_table"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	return fallback
}

// labelValues are the values of the exporter's extra labels for labels.
func (e *Exporter) labelValues(labels map[string]string) []string {
	out := make([]string, len(e.labelNames))
	for i, k := range e.labelNames {
		out[i] = labels[k]
	}
	return out
}

// Close closes every open source.
func (e *Exporter) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	var errs []error
	for _, t := range e.targets {
		if t.src != nil {
			errs = append(errs, t.src.Close())
			t.src = nil
		}
	}
	return errors.Join(errs...)
}

// oneLine folds a multi-line error message onto one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}
