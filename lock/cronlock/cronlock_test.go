package cronlock_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/schedlock/schedlock/lock"
	"github.com/schedlock/schedlock/lock/cronlock"
	"github.com/schedlock/schedlock/lock/internal/locktest"
)

// testTable is the lease table of this package's tests, created on each
// database and kept.
const testTable = "cronlock_test"

// liveDSNs are the databases and strategies the tests run on
// (locktest.LiveDSNs, by "backend/strategy"): the table strategy on
// testTable everywhere, and the session strategy, Open's default, on
// PostgreSQL and MariaDB/MySQL.
func liveDSNs(t *testing.T) map[string]string { return locktest.LiveDSNs(t, testTable) }

// openT opens dsn for the test, creating the lease table.
func openT(t *testing.T, dsn string) *lock.DB { return locktest.Open(t, dsn) }

// recordingLogger keeps what SkipIfLocked logs.
type recordingLogger struct {
	mu    sync.Mutex
	lines []string
}

func (l *recordingLogger) Info(msg string, kv ...any) { l.add("info "+msg, kv) }
func (l *recordingLogger) Error(err error, msg string, kv ...any) {
	l.add("error "+msg, append(kv, "error", err))
}

func (l *recordingLogger) add(msg string, kv []any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprint(append([]any{msg}, kv...)...))
}

func (l *recordingLogger) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// TestSkipIfLockedSkipsWhileHeld: while one node runs the job, the other
// node's run of it is skipped and logged with the lock's name; once the
// first has finished, the other runs.
func TestSkipIfLockedSkipsWhileHeld(t *testing.T) {
	for backend, dsn := range liveDSNs(t) {
		t.Run(backend, func(t *testing.T) {
			a, b := openT(t, dsn), openT(t, dsn)
			name := "nightly-" + lock.NewOwner()
			logA, logB := &recordingLogger{}, &recordingLogger{}
			ranB := 0
			nodeB := cron.NewChain(cronlock.SkipIfLocked(b, name, lock.Options{}, logB)).Then(cron.FuncJob(func() { ranB++ }))
			ranA := 0
			nodeA := cron.NewChain(cronlock.SkipIfLocked(a, name, lock.Options{}, logA)).Then(cron.FuncJob(func() {
				ranA++
				nodeB.Run() // the other node's run of the same tick
			}))
			nodeA.Run()
			if ranA != 1 || ranB != 0 {
				t.Fatalf("ran on A %d, on B %d times; want 1, 0", ranA, ranB)
			}
			if lines := logB.all(); len(lines) != 1 || !strings.Contains(lines[0], "info skip") || !strings.Contains(lines[0], name) {
				t.Errorf("B logged %q, want one skip naming %s", lines, name)
			}
			if lines := logA.all(); len(lines) != 0 {
				t.Errorf("A logged %q, want nothing", lines)
			}
			nodeB.Run()
			if ranB != 1 {
				t.Errorf("B ran %d times after A finished, want 1", ranB)
			}
		})
	}
}

// The README's robfig/cron example at test speed: three nodes run an
// instant job @every 2s with AtLeast 1s.
const (
	tickInterval = 2 * time.Second
	tickAtLeast  = time.Second
	ticksToWatch = 4
)

// TestSkipIfLockedOncePerTick: three robfig/cron schedulers (three nodes,
// each with its own lock.DB) run an instant job @every 2s under one lock
// with AtLeast 1s, on every database and strategy (the session strategy
// as Open picks it by default on PostgreSQL and MariaDB). Every tick runs
// exactly once: a run is counted under the time cron scheduled it for
// (the entry's Prev, the same instant on the three nodes), so a node that
// fires late is still counted under its tick, and each tick from the
// first run to the last must have one run, no more and no fewer. AtLeast
// keeps the nodes that fire a moment after the first from running the
// tick again; it ends a second before the next tick.
func TestSkipIfLockedOncePerTick(t *testing.T) {
	var wg sync.WaitGroup
	for backend, dsn := range liveDSNs(t) {
		wg.Go(func() { t.Run(backend, func(t *testing.T) { checkOncePerTick(t, dsn) }) })
	}
	wg.Wait()
}

func checkOncePerTick(t *testing.T, dsn string) {
	name := "tick-" + lock.NewOwner()
	var mu sync.Mutex
	runs := map[time.Time][]int{} // scheduled time → nodes that ran it
	seen := make(chan struct{}, 1)
	var crons []*cron.Cron
	for node := range 3 {
		db := openT(t, dsn)
		warmUp(t, db)
		c := cron.New()
		var id cron.EntryID
		id, err := c.AddJob("@every "+tickInterval.String(), cron.NewChain(cronlock.SkipIfLocked(db, name,
			lock.Options{AtMost: time.Minute, AtLeast: tickAtLeast}, cron.DiscardLogger)).Then(cron.FuncJob(func() {
			tick := c.Entry(id).Prev // the time this run was scheduled for
			mu.Lock()
			runs[tick] = append(runs[tick], node)
			mu.Unlock()
			select {
			case seen <- struct{}{}:
			default:
			}
		})))
		if err != nil {
			t.Fatal(err)
		}
		crons = append(crons, c)
	}
	startAligned(t, crons)
	distinct := func() []time.Time {
		mu.Lock()
		defer mu.Unlock()
		ticks := make([]time.Time, 0, len(runs))
		for tick := range runs {
			ticks = append(ticks, tick)
		}
		slices.SortFunc(ticks, time.Time.Compare)
		return ticks
	}
	timeout := time.After(20 * ticksToWatch * tickInterval)
	for len(distinct()) < ticksToWatch {
		select {
		case <-seen:
		case <-timeout:
			t.Fatalf("%d ticks ran in %s, want %d", len(distinct()), 20*ticksToWatch*tickInterval, ticksToWatch)
		}
	}
	for _, c := range crons {
		<-c.Stop().Done()
	}
	ticks := distinct()
	mu.Lock()
	defer mu.Unlock()
	total := 0
	for _, tick := range ticks {
		total += len(runs[tick])
		if n := len(runs[tick]); n != 1 {
			t.Errorf("the tick of %s ran %d times (nodes %v), want once", tick.Format("15:04:05.000"), n, runs[tick])
		}
	}
	for i := 1; i < len(ticks); i++ {
		if gap := ticks[i].Sub(ticks[i-1]); gap != tickInterval {
			t.Errorf("no run between the ticks of %s and %s (%s apart, want %s): a tick was skipped by every node",
				ticks[i-1].Format("15:04:05.000"), ticks[i].Format("15:04:05.000"), gap, tickInterval)
		}
	}
	if total != len(ticks) {
		t.Errorf("%d runs for %d ticks, want one run per tick", total, len(ticks))
	}
	t.Logf("%d runs for %d ticks", total, len(ticks))
}

// startAligned starts the schedulers within one second of the wall clock,
// so that @every schedules them for the same instants (cron rounds an
// @every schedule to whole seconds from its start), and checks that their
// next runs agree; a start stalled across a second is tried again.
func startAligned(t *testing.T, crons []*cron.Cron) {
	t.Helper()
	for attempt := 0; ; attempt++ {
		now := time.Now()
		time.Sleep(now.Truncate(time.Second).Add(time.Second + 50*time.Millisecond).Sub(now))
		for _, c := range crons {
			c.Start()
		}
		next := map[time.Time]bool{}
		for _, c := range crons {
			for _, e := range c.Entries() {
				next[e.Next] = true
			}
		}
		if len(next) == 1 {
			return
		}
		for _, c := range crons {
			<-c.Stop().Done()
		}
		if attempt == 5 {
			t.Fatalf("the schedulers' next runs differ after %d starts: %v", attempt+1, next)
		}
	}
}

// warmUp takes and releases a lock on db once, so that the connection and
// statements a lock needs are ready before the schedulers start.
func warmUp(t *testing.T, db *lock.DB) {
	t.Helper()
	if err := lock.WithLock(t.Context(), db, "warm-up-"+lock.NewOwner(), lock.Options{}, func(context.Context, lock.Lease) error { return nil }); err != nil {
		t.Fatal(err)
	}
}

// TestSkipIfLockedLogsErrors: a lock that cannot be taken (closed handle),
// and a ContextJob's error, are logged at Error; the job does not run
// without its lock.
func TestSkipIfLockedLogsErrors(t *testing.T) {
	db := openT(t, locktest.SQLite(liveDSNs(t)))
	log := &recordingLogger{}
	var gotCtx context.Context
	job := cron.NewChain(cronlock.SkipIfLocked(db, "with-context", lock.Options{}, log)).Then(cronlock.JobFunc(func(ctx context.Context) error {
		gotCtx = ctx
		return errors.New("report failed")
	}))
	job.Run()
	if gotCtx == nil || gotCtx.Done() == nil {
		t.Fatal("the ContextJob did not get the lease's context")
	}
	if lines := log.all(); len(lines) != 1 || !strings.Contains(lines[0], "report failed") {
		t.Errorf("logged %q, want the job's error", lines)
	}

	_ = db.Close()
	ran := false
	cron.NewChain(cronlock.SkipIfLocked(db, "closed", lock.Options{}, log)).Then(cron.FuncJob(func() { ran = true })).Run()
	if ran {
		t.Error("the job ran without its lock")
	}
	if lines := log.all(); len(lines) != 2 || !strings.HasPrefix(lines[1], "error ") {
		t.Errorf("logged %q, want an error for the closed handle", lines)
	}
}
