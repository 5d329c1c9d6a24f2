// Package claimtest is the conformance suite of task-row claims: the
// promises of package claimtable, run as subtests against one opened SQL
// backend for every claim strategy its dialect can run. A dialect's live
// test calls Run; the same suite runs on SQLite without a server.
package claimtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/claimtable"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// Run runs the suite on the SQL backend for each strategy its claim
// builder supports.
func Run(t *testing.T, backend dialects.Backend) {
	t.Helper()
	db := sqlkit.MustOf(backend)
	b, ok := claimtable.BuilderOf(backend)
	if !ok {
		t.Fatalf("the %s dialect registers no claim builder", db.Info.Dialect)
	}
	for _, strategy := range b.Strategies() {
		t.Run(string(strategy), func(t *testing.T) {
			s := &suite{db: db, b: b, strategy: strategy}
			t.Run("ExactlyOnce", s.exactlyOnce)
			t.Run("CrashReclaimedAfterLease", s.crashReclaimed)
			t.Run("LiveClaimNotReclaimed", s.liveNotReclaimed)
			t.Run("Order", s.order)
			t.Run("WrongOwnerRefused", s.wrongOwner)
			t.Run("FailRetriesThenFails", s.failRetries)
			t.Run("GiveBack", s.giveBack)
			t.Run("BatchAboveParameterLimit", s.bigBatch)
			t.Run("BadInput", s.badInput)
			t.Run("FinishMany", s.finishMany)
			t.Run("FinishManyAboveStatementRows", s.finishManyLarge)
			t.Run("FinishManyBadInput", s.finishManyBadInput)
		})
	}
	t.Run("MissingMappedColumns", func(t *testing.T) { missingColumns(t, backend, b) })
}

type suite struct {
	db       *sqlkit.DB
	b        claimtable.Builder
	strategy dialects.ClaimStrategy
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// Unique returns prefix and 10 random hex digits.
func Unique(prefix string) string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// claimer makes a fresh task table for the test and drops it after.
func (s *suite) claimer(t *testing.T, opts claimtable.Options) *claimtable.Claimer {
	t.Helper()
	if opts.Backoff == nil {
		opts.Backoff = func(int) time.Duration { return 0 }
	}
	cl, err := claimtable.New(s.db.SQL, s.b, claimtable.Table{Name: Unique("sl_tasks_")}, s.strategy, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxFor(t)
	if err := cl.CreateTable(ctx); err != nil {
		t.Fatalf("create table: %v", err)
	}
	if err := cl.CreateTable(ctx); err != nil {
		t.Fatalf("create table a second time must succeed: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := cl.DropTable(ctx); err != nil {
			t.Errorf("drop table: %v", err)
		}
	})
	return cl
}

func add(t *testing.T, cl *claimtable.Claimer, tasks ...claimtable.NewTask) {
	t.Helper()
	if err := cl.Add(ctxFor(t), tasks...); err != nil {
		t.Fatalf("add %d tasks: %v", len(tasks), err)
	}
}

func plain(n int) []claimtable.NewTask {
	out := make([]claimtable.NewTask, n)
	for i := range out {
		out[i] = claimtable.NewTask{Type: "t", Payload: []byte(fmt.Sprint(i))}
	}
	return out
}

// rows lists every row of the table by id.
func rows(t *testing.T, cl *claimtable.Claimer) map[int64]claimtable.Row {
	t.Helper()
	l, err := cl.List(ctxFor(t), claimtable.ListOptions{All: true, Limit: 100000})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	out := map[int64]claimtable.Row{}
	for _, r := range l.Rows {
		out[r.ID] = r
	}
	return out
}

// exactlyOnce: N workers claiming M rows in batches claim every row once.
func (s *suite) exactlyOnce(t *testing.T) {
	const workers, total, batch = 6, 240, 7
	cl := s.claimer(t, claimtable.Options{})
	add(t, cl, plain(total)...)
	ctx := ctxFor(t)
	var mu sync.Mutex
	seen := map[int64]string{}
	var dup []string
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			owner := fmt.Sprintf("worker-%d-%s", w, Unique(""))
			for empty := 0; empty < 3; {
				tasks, err := cl.Claim(ctx, claimtable.Request{Owner: owner, Max: batch})
				if err != nil {
					errs <- fmt.Errorf("%s claim: %w", owner, err)
					return
				}
				if len(tasks) == 0 {
					empty++
					continue
				}
				empty = 0
				mu.Lock()
				for _, tk := range tasks {
					if prev, ok := seen[tk.ID]; ok {
						dup = append(dup, fmt.Sprintf("row %d by %s and %s", tk.ID, prev, owner))
					}
					seen[tk.ID] = owner
				}
				mu.Unlock()
				for i := range tasks {
					if err := cl.Complete(ctx, &tasks[i]); err != nil {
						errs <- fmt.Errorf("%s complete %d: %w", owner, tasks[i].ID, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(dup) > 0 {
		t.Fatalf("rows claimed twice: %v", dup)
	}
	all := rows(t, cl)
	if len(all) != total {
		t.Fatalf("table has %d rows, want %d", len(all), total)
	}
	for id, r := range all {
		if r.State != claimtable.StateDone {
			t.Errorf("row %d is %s after every worker finished; want done", id, r.State)
		}
		if _, ok := seen[id]; !ok {
			t.Errorf("row %d was never claimed", id)
		}
	}
}

// crashReclaimed: a worker that claims and dies loses its rows once the
// lease has passed — judged by the database clock: the reclaim's now is
// never before the dead worker's lease end — and its late completion is
// refused, leaving the new owner's row unchanged.
func (s *suite) crashReclaimed(t *testing.T) {
	const lease = 1500 * time.Millisecond
	cl := s.claimer(t, claimtable.Options{Lease: lease})
	add(t, cl, plain(3)...)
	ctx := ctxFor(t)
	dead, err := cl.Claim(ctx, claimtable.Request{Owner: "dead-worker", Max: 3})
	if err != nil || len(dead) != 3 {
		t.Fatalf("claim: %d rows, %v; want 3", len(dead), err)
	}
	deadline := time.Now().Add(60 * time.Second)
	var got []claimtable.Task
	for len(got) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("rows of the dead worker not reclaimed within a minute (lease %s); got %d", lease, len(got))
		}
		tasks, err := cl.Claim(ctx, claimtable.Request{Owner: "rescuer", Max: 3, Lease: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tasks...)
		if len(got) < 3 {
			time.Sleep(100 * time.Millisecond) // polling the database clock, not synchronising
		}
	}
	byID := map[int64]claimtable.Task{}
	for _, d := range dead {
		byID[d.ID] = d
	}
	for _, g := range got {
		d, ok := byID[g.ID]
		if !ok {
			t.Fatalf("rescuer claimed row %d, which the dead worker never held", g.ID)
		}
		claimedAt := g.ClaimedUntil.Add(-time.Hour)
		if claimedAt.Before(d.ClaimedUntil) {
			t.Errorf("row %d reclaimed at %s, before the dead worker's lease ended at %s", g.ID, claimedAt, d.ClaimedUntil)
		}
		if g.Version <= d.Version {
			t.Errorf("row %d: reclaim version %d not above the dead claim's %d", g.ID, g.Version, d.Version)
		}
	}
	before := rows(t, cl)
	late := dead[0]
	if err := cl.Complete(ctx, &late); !errors.Is(err, claimtable.ErrNotClaimed) || !errors.Is(err, dialects.ErrNotOwner) {
		t.Fatalf("late completion by the dead worker: %v; want ErrNotClaimed", err)
	}
	if after := rows(t, cl); after[late.ID] != before[late.ID] {
		t.Fatalf("refused completion changed the row: %+v → %+v", before[late.ID], after[late.ID])
	}
}

// liveNotReclaimed: a row within its lease is not claimed again, and an
// administrator's release without force leaves it; with force it comes
// back.
func (s *suite) liveNotReclaimed(t *testing.T) {
	cl := s.claimer(t, claimtable.Options{Lease: time.Hour})
	add(t, cl, plain(2)...)
	ctx := ctxFor(t)
	held, err := cl.Claim(ctx, claimtable.Request{Owner: "alive", Max: 2})
	if err != nil || len(held) != 2 {
		t.Fatalf("claim: %d, %v", len(held), err)
	}
	if other, err := cl.Claim(ctx, claimtable.Request{Owner: "other", Max: 2}); err != nil || len(other) != 0 {
		t.Fatalf("second claim within the lease: %d rows, %v; want none", len(other), err)
	}
	if n, err := cl.ReleaseOwner(ctx, "alive", claimtable.ReleaseOptions{}); err != nil || n != 0 {
		t.Fatalf("release of live claims without force: %d, %v; want 0", n, err)
	}
	if n, err := cl.ReleaseOwner(ctx, "alive", claimtable.ReleaseOptions{Force: true}); err != nil || n != 2 {
		t.Fatalf("forced release: %d, %v; want 2", n, err)
	}
	if other, err := cl.Claim(ctx, claimtable.Request{Owner: "other", Max: 2}); err != nil || len(other) != 2 {
		t.Fatalf("claim after release: %d rows, %v; want 2", len(other), err)
	}
}

// order: claims go by priority (highest first), then due time, then id;
// rows not yet due are left.
func (s *suite) order(t *testing.T) {
	cl := s.claimer(t, claimtable.Options{})
	ctx := ctxFor(t)
	prios := []int64{1, 5, 0, 5, 3, 1, 0, 3}
	for _, p := range prios {
		add(t, cl, claimtable.NewTask{Type: "t", Priority: p})
	}
	add(t, cl, claimtable.NewTask{Type: "t", Priority: 99, Delay: time.Hour})
	var got []claimtable.Task
	for range prios {
		tasks, err := cl.Claim(ctx, claimtable.Request{Owner: "orderly", Max: 1})
		if err != nil || len(tasks) != 1 {
			t.Fatalf("claim: %d rows, %v", len(tasks), err)
		}
		got = append(got, tasks[0])
	}
	for i := 1; i < len(got); i++ {
		a, b := got[i-1], got[i]
		if a.Priority < b.Priority || (a.Priority == b.Priority && (a.Due.After(b.Due) || (a.Due.Equal(b.Due) && a.ID > b.ID))) {
			t.Fatalf("claim %d (id %d, priority %d, due %s) came before (id %d, priority %d, due %s)", i, a.ID, a.Priority, a.Due, b.ID, b.Priority, b.Due)
		}
	}
	if tasks, err := cl.Claim(ctx, claimtable.Request{Owner: "orderly", Max: 5}); err != nil || len(tasks) != 0 {
		t.Fatalf("a row due in an hour was claimed: %+v, %v", tasks, err)
	}
	batch := s.claimer(t, claimtable.Options{})
	for _, p := range prios {
		add(t, batch, claimtable.NewTask{Type: "t", Priority: p})
	}
	tasks, err := batch.Claim(ctx, claimtable.Request{Owner: "batch", Max: 3})
	if err != nil || len(tasks) != 3 {
		t.Fatalf("batch claim: %d, %v", len(tasks), err)
	}
	if p := []int64{tasks[0].Priority, tasks[1].Priority, tasks[2].Priority}; !slices.Equal(p, []int64{5, 5, 3}) {
		t.Fatalf("a batch of 3 took priorities %v; want the highest, [5 5 3]", p)
	}
}

// wrongOwner: completion, failure, give-back and extension by a worker
// that does not hold the row are refused and change nothing.
func (s *suite) wrongOwner(t *testing.T) {
	cl := s.claimer(t, claimtable.Options{Lease: time.Hour})
	add(t, cl, plain(1)...)
	ctx := ctxFor(t)
	tasks, err := cl.Claim(ctx, claimtable.Request{Owner: "rightful", Max: 1})
	if err != nil || len(tasks) != 1 {
		t.Fatalf("claim: %v", err)
	}
	before := rows(t, cl)
	intruder := tasks[0]
	intruder.Owner = "intruder"
	for name, op := range map[string]func(*claimtable.Task) error{
		"complete":  func(tk *claimtable.Task) error { return cl.Complete(ctx, tk) },
		"fail":      func(tk *claimtable.Task) error { return cl.Fail(ctx, tk) },
		"give back": func(tk *claimtable.Task) error { return cl.GiveBack(ctx, tk) },
		"extend":    func(tk *claimtable.Task) error { return cl.Extend(ctx, tk, time.Hour) },
	} {
		tk := intruder
		if err := op(&tk); !errors.Is(err, claimtable.ErrNotClaimed) {
			t.Errorf("%s by a non-owner: %v; want ErrNotClaimed", name, err)
		}
	}
	if after := rows(t, cl); after[intruder.ID] != before[intruder.ID] {
		t.Fatalf("refused operations changed the row: %+v → %+v", before[intruder.ID], after[intruder.ID])
	}
	own := tasks[0]
	if err := cl.Extend(ctx, &own, time.Hour); err != nil {
		t.Fatalf("extend by the owner: %v", err)
	}
	stale := tasks[0] // the version before the extension
	if err := cl.Complete(ctx, &stale); !errors.Is(err, claimtable.ErrNotClaimed) {
		t.Fatalf("completion at a stale version: %v; want ErrNotClaimed", err)
	}
	if err := cl.Complete(ctx, &own); err != nil {
		t.Fatalf("completion by the owner: %v", err)
	}
	if err := cl.Complete(ctx, &own); !errors.Is(err, claimtable.ErrNotClaimed) {
		t.Fatalf("second completion: %v; want ErrNotClaimed", err)
	}
}

// failRetries: a failure within the retries makes the row ready again
// (after the back-off, 0 here); the last one fails it for good.
func (s *suite) failRetries(t *testing.T) {
	cl := s.claimer(t, claimtable.Options{})
	add(t, cl, claimtable.NewTask{Type: "t", MaxRetries: 1})
	ctx := ctxFor(t)
	for attempt := 1; attempt <= 2; attempt++ {
		tasks, err := cl.Claim(ctx, claimtable.Request{Owner: "flaky", Max: 1})
		if err != nil || len(tasks) != 1 {
			t.Fatalf("attempt %d: claim %d rows, %v", attempt, len(tasks), err)
		}
		if tasks[0].Retries != attempt-1 || tasks[0].MaxRetries != 1 {
			t.Fatalf("attempt %d: retries %d/%d; want %d/1", attempt, tasks[0].Retries, tasks[0].MaxRetries, attempt-1)
		}
		if err := cl.Fail(ctx, &tasks[0]); err != nil {
			t.Fatalf("fail: %v", err)
		}
	}
	if tasks, err := cl.Claim(ctx, claimtable.Request{Owner: "flaky", Max: 1}); err != nil || len(tasks) != 0 {
		t.Fatalf("a row out of retries was claimed: %+v, %v", tasks, err)
	}
	for _, r := range rows(t, cl) {
		if r.State != claimtable.StateFailed || r.Retries != 2 || r.Owner != "flaky" {
			t.Fatalf("row after its last failure: %+v; want failed, 2 retries, owner kept", r)
		}
	}
	backoff := s.claimer(t, claimtable.Options{Backoff: func(int) time.Duration { return time.Hour }})
	add(t, backoff, claimtable.NewTask{Type: "t"})
	tasks, err := backoff.Claim(ctx, claimtable.Request{Owner: "flaky", Max: 1})
	if err != nil || len(tasks) != 1 {
		t.Fatal(err)
	}
	if err := backoff.Fail(ctx, &tasks[0]); err != nil {
		t.Fatal(err)
	}
	if again, err := backoff.Claim(ctx, claimtable.Request{Owner: "flaky", Max: 1}); err != nil || len(again) != 0 {
		t.Fatalf("a row in its hour of back-off was claimed: %+v, %v", again, err)
	}
}

// giveBack: a row given back is claimable again at once, retries
// unchanged.
func (s *suite) giveBack(t *testing.T) {
	cl := s.claimer(t, claimtable.Options{})
	add(t, cl, claimtable.NewTask{Type: "a"}, claimtable.NewTask{Type: "b"})
	ctx := ctxFor(t)
	tasks, err := cl.Claim(ctx, claimtable.Request{Owner: "w", Max: 5, Type: "b"})
	if err != nil || len(tasks) != 1 || tasks[0].Type != "b" {
		t.Fatalf("claim of type b: %+v, %v", tasks, err)
	}
	if err := cl.GiveBack(ctx, &tasks[0]); err != nil {
		t.Fatal(err)
	}
	again, err := cl.Claim(ctx, claimtable.Request{Owner: "w2", Max: 5})
	if err != nil || len(again) != 2 {
		t.Fatalf("claim after give-back: %d rows, %v; want 2", len(again), err)
	}
	for _, tk := range again {
		if tk.Retries != 0 {
			t.Fatalf("give-back counted a failure: %+v", tk)
		}
	}
}

// bigBatch: one claim of more rows than one statement takes parameters
// (SQL Server's 2,100) claims them all, once.
func (s *suite) bigBatch(t *testing.T) {
	const n = 2300
	cl := s.claimer(t, claimtable.Options{})
	add(t, cl, plain(n)...)
	tasks, err := cl.Claim(ctxFor(t), claimtable.Request{Owner: "bulk", Max: n})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[int64]bool{}
	for _, tk := range tasks {
		ids[tk.ID] = true
	}
	if len(tasks) != n || len(ids) != n {
		t.Fatalf("claimed %d rows (%d distinct); want %d", len(tasks), len(ids), n)
	}
}

// badInput: batch sizes out of range and bad owners are refused.
func (s *suite) badInput(t *testing.T) {
	cl := s.claimer(t, claimtable.Options{})
	ctx := ctxFor(t)
	for _, r := range []claimtable.Request{
		{Owner: "w", Max: 0},
		{Owner: "w", Max: claimtable.MaxBatch + 1},
		{Owner: "", Max: 1},
		{Owner: "w", Max: 1, Lease: -time.Second},
	} {
		if _, err := cl.Claim(ctx, r); !errors.Is(err, dialects.ErrInvalid) {
			t.Errorf("Claim(%+v): %v; want ErrInvalid", r, err)
		}
	}
	warned, err := claimtable.New(s.db.SQL, s.b, claimtable.Table{}, s.strategy, claimtable.Options{Lease: time.Minute, ExpectedRun: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if w := warned.Warnings(); len(w) != 1 {
		t.Fatalf("a lease shorter than the expected run: warnings %q; want one", w)
	}
}

// missingColumns: a user's table without the mapped columns is refused
// in one message naming them.
func missingColumns(t *testing.T, backend dialects.Backend, b claimtable.Builder) {
	ctx := ctxFor(t)
	db := sqlkit.MustOf(backend)
	name := Unique("sl_orders_")
	if _, err := db.SQL.ExecContext(ctx, "CREATE TABLE "+name+" (order_id INT PRIMARY KEY, state VARCHAR(20))"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.SQL.ExecContext(context.Background(), "DROP TABLE "+name) })
	cols := claimtable.DefaultColumns()
	cols.ID, cols.Status = "order_id", "state"
	cl, err := claimtable.New(db.SQL, b, claimtable.Table{Name: name, Columns: cols}, b.Strategies()[0], claimtable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = cl.CheckColumns(ctx, claimtable.ReadColumns(backend))
	if !errors.Is(err, dialects.ErrInvalid) {
		t.Fatalf("CheckColumns: %v; want ErrInvalid", err)
	}
	for _, want := range []string{"due_at (due_at)", "owner (owner)", "claimed_until (claimed_until)", "version (version)"} {
		if !contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if contains(err.Error(), "order_id") || contains(err.Error(), "state (status)") {
		t.Errorf("error %q names columns that exist", err)
	}
	if err := cl.CreateTable(ctx); !errors.Is(err, dialects.ErrInvalid) {
		t.Errorf("CreateTable of a mapped table: %v; want ErrInvalid", err)
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || (len(s) >= len(sub) && indexOf(s, sub) >= 0)
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}
