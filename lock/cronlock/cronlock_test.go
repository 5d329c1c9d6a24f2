package cronlock_test

import (
	"context"
	"errors"
	"fmt"
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

// liveDSNs are the databases the tests run on (locktest.LiveDSNs), with
// the table strategy on testTable.
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

// TestSkipIfLockedOncePerTick: two cron schedulers with a job every second
// on the same database run each second's tick once; AtLeast keeps the
// second node from running a tick after the first's quick run.
func TestSkipIfLockedOncePerTick(t *testing.T) {
	var wg sync.WaitGroup
	for backend, dsn := range liveDSNs(t) {
		wg.Go(func() {
			t.Run(backend, func(t *testing.T) {
				name := "tick-" + lock.NewOwner()
				var mu sync.Mutex
				runs := map[int64]int{}
				enough := make(chan struct{})
				var crons []*cron.Cron
				for range 2 {
					db := openT(t, dsn)
					c := cron.New(cron.WithSeconds())
					_, err := c.AddJob("* * * * * *", cron.NewChain(cronlock.SkipIfLocked(db, name,
						lock.Options{AtMost: time.Minute, AtLeast: 500 * time.Millisecond}, cron.DiscardLogger)).Then(cron.FuncJob(func() {
						mu.Lock()
						tick := time.Now().Round(time.Second).Unix()
						runs[tick]++
						if len(runs) == 4 {
							close(enough)
						}
						mu.Unlock()
					})))
					if err != nil {
						t.Fatal(err)
					}
					crons = append(crons, c)
				}
				for _, c := range crons {
					c.Start()
				}
				select {
				case <-enough:
				case <-time.After(30 * time.Second):
					t.Error("fewer than 4 ticks ran in 30s")
				}
				for _, c := range crons {
					<-c.Stop().Done()
				}
				mu.Lock()
				defer mu.Unlock()
				for tick, n := range runs {
					if n != 1 {
						t.Errorf("tick %d ran %d times, want once: %v", tick, n, runs)
					}
				}
			})
		})
	}
	wg.Wait()
}

// TestSkipIfLockedLogsErrors: a lock that cannot be taken (closed handle),
// and a ContextJob's error, are logged at Error; the job does not run
// without its lock.
func TestSkipIfLockedLogsErrors(t *testing.T) {
	db := openT(t, liveDSNs(t)["sqlite"])
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
