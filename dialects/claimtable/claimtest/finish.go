package claimtest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/claimtable"
)

// finishMany: one FinishMany of one owner completes, fails (with retries
// left: ready after the back-off, unowned; without: failed, owner kept)
// and gives back its rows, each as the single calls would, and names the
// rows it no longer holds — a stale version, another owner's row, a row
// no longer claimed — leaving those unchanged.
func (s *suite) finishMany(t *testing.T) {
	cl := s.claimer(t, claimtable.Options{Lease: time.Hour, Backoff: func(int) time.Duration { return time.Hour }})
	ctx := ctxFor(t)
	// Priorities fix which worker claims which row.
	add(t, cl,
		claimtable.NewTask{Type: "t", Priority: 90},                 // complete
		claimtable.NewTask{Type: "t", Priority: 80},                 // fail, retries left
		claimtable.NewTask{Type: "t", Priority: 70, MaxRetries: -1}, // fail, none left
		claimtable.NewTask{Type: "t", Priority: 60},                 // give back
		claimtable.NewTask{Type: "t", Priority: 50},                 // stale version
		claimtable.NewTask{Type: "t", Priority: 10},                 // the other worker's
	)
	mine, err := cl.Claim(ctx, claimtable.Request{Owner: "batcher", Max: 5})
	if err != nil || len(mine) != 5 {
		t.Fatalf("claim: %d rows, %v; want 5", len(mine), err)
	}
	theirs, err := cl.Claim(ctx, claimtable.Request{Owner: "other", Max: 5})
	if err != nil || len(theirs) != 1 {
		t.Fatalf("claim of the other worker: %d rows, %v; want 1", len(theirs), err)
	}
	stale := mine[4]
	if err := cl.Extend(ctx, &mine[4], time.Hour); err != nil {
		t.Fatal(err)
	}
	forged := theirs[0]
	forged.Owner = "batcher" // the other worker's row at its own version
	before := rows(t, cl)
	items := []claimtable.Finished{
		{Task: &mine[0], Outcome: claimtable.Completed},
		{Task: &mine[1], Outcome: claimtable.Failed},
		{Task: &mine[2], Outcome: claimtable.Failed},
		{Task: &mine[3], Outcome: claimtable.GivenBack},
		{Task: &stale, Outcome: claimtable.Completed},
		{Task: &forged, Outcome: claimtable.Completed},
	}
	versions := make([]int64, len(items))
	for i, it := range items {
		versions[i] = it.Task.Version
	}
	lost, err := cl.FinishMany(ctx, items)
	if err != nil {
		t.Fatalf("finish many: %v", err)
	}
	if !slices.Equal(lost, []int{4, 5}) {
		t.Fatalf("finish many reported %v no longer held; want [4 5] (the stale version, the other worker's row)", lost)
	}
	for i, it := range items {
		want := versions[i]
		if i < 4 {
			want++
		}
		if it.Task.Version != want {
			t.Errorf("item %d: version %d after the finish; want %d", i, it.Task.Version, want)
		}
	}
	after := rows(t, cl)
	check := func(name string, id int64, state claimtable.RowState, owner string, retries int) {
		t.Helper()
		r := after[id]
		if r.State != state || r.Owner != owner || r.Retries != retries || !r.ClaimedUntil.IsZero() {
			t.Errorf("%s (row %d): %+v; want %s, owner %q, %d retries, no claim", name, id, r, state, owner, retries)
		}
	}
	check("completed", mine[0].ID, claimtable.StateDone, "batcher", 0)
	check("failed with retries left", mine[1].ID, claimtable.StateReady, "", 1)
	check("failed without retries", mine[2].ID, claimtable.StateFailed, "batcher", 1)
	check("given back", mine[3].ID, claimtable.StateReady, "", 0)
	if !after[mine[1].ID].Due.After(before[mine[1].ID].Due.Add(30 * time.Minute)) {
		t.Errorf("a failed row's due time %s did not move by its hour of back-off (was %s)", after[mine[1].ID].Due, before[mine[1].ID].Due)
	}
	if !after[mine[3].ID].Due.Equal(before[mine[3].ID].Due) {
		t.Errorf("a given-back row's due time moved: %s → %s", before[mine[3].ID].Due, after[mine[3].ID].Due)
	}
	for _, id := range []int64{stale.ID, forged.ID} {
		if after[id] != before[id] {
			t.Errorf("row %d no longer held changed: %+v → %+v", id, before[id], after[id])
		}
	}
	// Only the given-back row is claimable: the failed one waits its
	// back-off, the failed-for-good and done ones never come back.
	again, err := cl.Claim(ctx, claimtable.Request{Owner: "third", Max: 5})
	if err != nil || len(again) != 1 || again[0].ID != mine[3].ID || again[0].Retries != 0 {
		t.Fatalf("claim after the finish: %+v, %v; want the given-back row alone, no failure counted", again, err)
	}
	// A row finished already (failed for good, owner kept, at the version
	// the finish gave it) is not claimed: its status is checked too.
	gone := mine[2]
	if lost, err := cl.FinishMany(ctx, []claimtable.Finished{{Task: &gone, Outcome: claimtable.Completed}}); err != nil || !slices.Equal(lost, []int{0}) {
		t.Fatalf("finish of a row failed for good: %v, %v; want it reported", lost, err)
	}
	if r := rows(t, cl)[gone.ID]; r != after[gone.ID] {
		t.Fatalf("finish of a row failed for good changed it: %+v → %+v", after[gone.ID], r)
	}
}

// finishManyLarge: a finish of more rows than one statement takes
// (MySQL's 32, SQL Server's 250) finishes every row still held and names
// exactly the others.
func (s *suite) finishManyLarge(t *testing.T) {
	const n = 300
	cl := s.claimer(t, claimtable.Options{Lease: time.Hour})
	add(t, cl, plain(n)...)
	ctx := ctxFor(t)
	tasks, err := cl.Claim(ctx, claimtable.Request{Owner: "bulk", Max: n})
	if err != nil || len(tasks) != n {
		t.Fatalf("claim: %d rows, %v", len(tasks), err)
	}
	items := make([]claimtable.Finished, n)
	var want []int
	for i := range tasks {
		items[i] = claimtable.Finished{Task: &tasks[i], Outcome: claimtable.Completed}
		if i%37 == 5 {
			tasks[i].Version-- // a stale copy
			want = append(want, i)
		}
	}
	lost, err := cl.FinishMany(ctx, items)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(lost, want) {
		t.Fatalf("finish of %d rows reported %v no longer held; want %v", n, lost, want)
	}
	all := rows(t, cl)
	for i, tk := range tasks {
		wantState := claimtable.StateDone
		if slices.Contains(want, i) {
			wantState = claimtable.StateClaimed
		}
		if all[tk.ID].State != wantState {
			t.Errorf("row %d (item %d): %s; want %s", tk.ID, i, all[tk.ID].State, wantState)
		}
	}
}

// finishManyBadInput: tasks of two owners, a row twice, an unknown
// outcome are refused before anything is sent.
func (s *suite) finishManyBadInput(t *testing.T) {
	cl := s.claimer(t, claimtable.Options{Lease: time.Hour})
	add(t, cl, plain(2)...)
	ctx := ctxFor(t)
	a, err := cl.Claim(ctx, claimtable.Request{Owner: "a", Max: 1})
	if err != nil || len(a) != 1 {
		t.Fatal(len(a), err)
	}
	b, err := cl.Claim(ctx, claimtable.Request{Owner: "b", Max: 1})
	if err != nil || len(b) != 1 {
		t.Fatal(len(b), err)
	}
	before := rows(t, cl)
	for name, items := range map[string][]claimtable.Finished{
		"two owners":      {{Task: &a[0], Outcome: claimtable.Completed}, {Task: &b[0], Outcome: claimtable.Completed}},
		"a row twice":     {{Task: &a[0], Outcome: claimtable.Completed}, {Task: &a[0], Outcome: claimtable.Failed}},
		"unknown outcome": {{Task: &a[0], Outcome: 0}},
		"nil task":        {{Outcome: claimtable.Completed}},
	} {
		if _, err := cl.FinishMany(ctx, items); !errors.Is(err, dialects.ErrInvalid) {
			t.Errorf("%s: %v; want ErrInvalid", name, err)
		}
	}
	if after := rows(t, cl); len(after) != len(before) || after[a[0].ID] != before[a[0].ID] || after[b[0].ID] != before[b[0].ID] {
		t.Fatalf("refused finishes changed rows: %+v → %+v", before, after)
	}
}
