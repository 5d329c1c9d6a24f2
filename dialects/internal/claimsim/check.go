package claimsim

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects/claimtable"
	"github.com/schedlock/schedlock/internal/fakesql"
)

// simNow is the simulated database clock.
var simNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// row is a task row of the default table.
func row(id int64, status, owner string, version, retries, maxRetries int64) Row {
	var o any
	if owner != "" {
		o = owner
	}
	var until any
	if status == claimtable.StatusClaimed {
		until = simNow.Add(time.Hour)
	}
	return Row{"id": id, "task_type": "t", "payload": nil, "status": status, "due_at": simNow.Add(-time.Minute),
		"priority": int64(0), "retries": retries, "max_retries": maxRetries, "owner": o, "claimed_until": until,
		"version": version, "updated_at": simNow.Add(-time.Minute)}
}

func open(t *testing.T, b claimtable.Builder, d Dialect, table claimtable.Table, opts claimtable.Options, rows ...Row) (*Table, *claimtable.Claimer) {
	t.Helper()
	sim := &Table{Name: "sl_tasks", ID: "id", D: d, Now: simNow, Rows: map[int64]Row{}}
	for _, r := range rows {
		sim.Rows[r["id"].(int64)] = r
	}
	db, _ := fakesql.Open(sim)
	t.Cleanup(func() { _ = db.Close() })
	table.Name = sim.Name
	cl, err := claimtable.New(db, b, table, b.Strategies()[0], opts)
	if err != nil {
		t.Fatal(err)
	}
	return sim, cl
}

func task(r Row) claimtable.Task {
	owner, _ := r["owner"].(string)
	return claimtable.Task{ID: r["id"].(int64), Owner: owner, Version: r["version"].(int64), Retries: int(r["retries"].(int64))}
}

// CheckFinish runs the batch finish of b on the simulator: the outcomes
// of one owner's rows (done; ready after the back-off or failed for good,
// at the boundary of the retries; given back), the rows it no longer
// holds (a stale version, another owner's row, a row no longer claimed),
// a row of the owner outside the batch, a table without max_retries and
// updated_at columns, and a batch above the rows of one statement.
func CheckFinish(t *testing.T, b claimtable.Builder, d Dialect) {
	t.Run("Outcomes", func(t *testing.T) { checkOutcomes(t, b, d) })
	t.Run("WithoutOptionalColumns", func(t *testing.T) { checkMapped(t, b, d) })
	t.Run("AboveStatementRows", func(t *testing.T) { checkLarge(t, b, d) })
}

func checkOutcomes(t *testing.T, b claimtable.Builder, d Dialect) {
	const A, B = "worker-a", "worker-b"
	sim, cl := open(t, b, d, claimtable.Table{}, claimtable.Options{Backoff: func(int) time.Duration { return time.Hour }},
		row(1, "claimed", A, 5, 0, 3), // complete
		row(2, "claimed", A, 3, 0, 3), // fail, retries left
		row(3, "claimed", A, 7, 2, 2), // fail, none left
		row(4, "claimed", A, 2, 1, 3), // give back
		row(5, "claimed", A, 9, 0, 3), // the task holds version 8: stale
		row(6, "claimed", B, 4, 0, 3), // another owner's, at the version the task holds
		row(7, "failed", A, 5, 3, 2),  // failed for good, owner and version the task's
		row(8, "claimed", A, 1, 2, 3), // fail at retries + 1 = max: ready again
		row(9, "claimed", A, 1, 0, 3), // the owner's, not in the batch
	)
	before := map[int64]Row{}
	for id, r := range sim.Rows {
		before[id] = r
	}
	tasks := make([]claimtable.Task, 9)
	for i := range tasks {
		tasks[i] = task(sim.Rows[int64(i+1)])
	}
	tasks[4].Version = 8
	tasks[5].Owner = A
	outcomes := []claimtable.Outcome{claimtable.Completed, claimtable.Failed, claimtable.Failed, claimtable.GivenBack,
		claimtable.Completed, claimtable.Completed, claimtable.Completed, claimtable.Failed}
	items := make([]claimtable.Finished, len(outcomes))
	for i, o := range outcomes {
		items[i] = claimtable.Finished{Task: &tasks[i], Outcome: o}
	}
	lost, err := cl.FinishMany(t.Context(), items)
	if err != nil {
		t.Fatalf("finish many: %v", err)
	}
	if want := []int{4, 5, 6}; !slices.Equal(lost, want) {
		t.Errorf("rows no longer held: %v; want %v (stale version, another owner's, failed for good)", lost, want)
	}
	for i, v := range []int64{6, 4, 8, 3, 8, 4, 5, 2} {
		if tasks[i].Version != v {
			t.Errorf("task %d: version %d after the finish; want %d", i+1, tasks[i].Version, v)
		}
	}
	later := simNow.Add(time.Hour)
	want := map[int64]Row{
		1: {"status": "done", "owner": A, "claimed_until": nil, "version": int64(6), "retries": int64(0), "due_at": simNow.Add(-time.Minute)},
		2: {"status": "ready", "owner": nil, "claimed_until": nil, "version": int64(4), "retries": int64(1), "due_at": later},
		3: {"status": "failed", "owner": A, "claimed_until": nil, "version": int64(8), "retries": int64(3), "due_at": simNow.Add(-time.Minute)},
		4: {"status": "ready", "owner": nil, "claimed_until": nil, "version": int64(3), "retries": int64(1), "due_at": simNow.Add(-time.Minute)},
		8: {"status": "ready", "owner": nil, "claimed_until": nil, "version": int64(2), "retries": int64(3), "due_at": later},
	}
	for id, w := range want {
		got := sim.Rows[id]
		for col, v := range w {
			if !same(got[col], v) {
				t.Errorf("row %d: %s = %v; want %v", id, col, got[col], v)
			}
		}
		if !same(got["updated_at"], simNow) {
			t.Errorf("row %d: updated_at %v; want the statement's now %v", id, got["updated_at"], simNow)
		}
	}
	for _, id := range []int64{5, 6, 7, 9} {
		if fmt.Sprint(sim.Rows[id]) != fmt.Sprint(before[id]) {
			t.Errorf("row %d not to be changed: %v → %v", id, before[id], sim.Rows[id])
		}
	}
}

// same compares two simulated values, numbers of either representation as
// numbers and times as instants.
func same(a, b any) bool {
	switch x := a.(type) {
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	case float64:
		switch y := b.(type) {
		case int64:
			return x == float64(y)
		case float64:
			return x == y
		}
	case int64:
		if y, ok := b.(float64); ok {
			return float64(x) == y
		}
	}
	return a == b
}

// checkMapped: a table without max_retries (Options.MaxRetries bound
// instead) and updated_at columns.
func checkMapped(t *testing.T, b claimtable.Builder, d Dialect) {
	cols := claimtable.DefaultColumns()
	cols.MaxRetries, cols.UpdatedAt = "", ""
	strip := func(r Row) Row { delete(r, "max_retries"); delete(r, "updated_at"); return r }
	sim, cl := open(t, b, d, claimtable.Table{Columns: cols}, claimtable.Options{MaxRetries: 1, Backoff: func(int) time.Duration { return time.Minute }},
		strip(row(1, "claimed", "w", 1, 0, 0)), // 0 + 1 > 1 is false: ready
		strip(row(2, "claimed", "w", 1, 1, 0)), // 1 + 1 > 1: failed
	)
	t1, t2 := task(sim.Rows[1]), task(sim.Rows[2])
	lost, err := cl.FinishMany(t.Context(), []claimtable.Finished{{Task: &t1, Outcome: claimtable.Failed}, {Task: &t2, Outcome: claimtable.Failed}})
	if err != nil || len(lost) != 0 {
		t.Fatalf("finish many: %v, %v; want every row finished", lost, err)
	}
	if s := sim.Rows[1]["status"]; s != "ready" || !same(sim.Rows[1]["due_at"], simNow.Add(time.Minute)) {
		t.Errorf("row with a retry left under MaxRetries 1: %v", sim.Rows[1])
	}
	if s := sim.Rows[2]["status"]; s != "failed" || sim.Rows[2]["owner"] != "w" {
		t.Errorf("row out of retries under MaxRetries 1: %v", sim.Rows[2])
	}
}

// checkLarge: 300 rows, every 37th stale, finished across statements.
func checkLarge(t *testing.T, b claimtable.Builder, d Dialect) {
	const n = 300
	rows := make([]Row, n)
	for i := range rows {
		rows[i] = row(int64(i+1), "claimed", "bulk", 2, 0, 3)
	}
	sim, cl := open(t, b, d, claimtable.Table{}, claimtable.Options{}, rows...)
	tasks := make([]claimtable.Task, n)
	items := make([]claimtable.Finished, n)
	var want []int
	for i := range tasks {
		tasks[i] = task(sim.Rows[int64(i+1)])
		if i%37 == 5 {
			tasks[i].Version = 1
			want = append(want, i)
		}
		items[i] = claimtable.Finished{Task: &tasks[i], Outcome: claimtable.Completed}
	}
	lost, err := cl.FinishMany(t.Context(), items)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(lost, want) {
		t.Fatalf("rows no longer held: %v; want %v", lost, want)
	}
	for i := range tasks {
		wantStatus := "done"
		if slices.Contains(want, i) {
			wantStatus = "claimed"
		}
		if s := sim.Rows[int64(i+1)]["status"]; s != wantStatus {
			t.Errorf("row %d: %v; want %s", i+1, s, wantStatus)
		}
	}
}
