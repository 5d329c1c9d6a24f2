package sqlkit_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// historyBackends are SQLite and every live server whose DSN is set.
func historyBackends(t *testing.T) map[string]*sqlkit.DB {
	out := map[string]*sqlkit.DB{"sqlite": openSQLite(t)}
	for _, s := range liveServers(t) {
		out[s.name] = openDetected(t, s.driver, s.dsn, s.dialect)
	}
	return out
}

// freshTable is a native lock table and its run table, dropped at the end.
func freshTable(t *testing.T, db *sqlkit.DB) (dialects.TableLocker, dialects.RunHistory) {
	t.Helper()
	ctx := testContext(t)
	tl, err := db.TableLocker(dialects.Table{Name: uniqueName("hist_")})
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	h, err := tl.(dialects.RunHistorian).RunHistory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = db.SQL.Exec("DROP TABLE " + h.Table())
		_ = tl.(dialects.TableDropper).DropTable(testContext(t))
	})
	return tl, h
}

func TestRunHistoryLive(t *testing.T) {
	for name, db := range historyBackends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := testContext(t)
			_, h := freshTable(t, db)
			if err := h.Record(ctx, dialects.Run{Name: "job", Token: 1}, 3); !errors.Is(err, dialects.ErrNoTable) {
				t.Fatalf("Record before the run table exists = %v, want ErrNoTable", err)
			}
			if _, err := h.Runs(ctx, "job", 10); !errors.Is(err, dialects.ErrNoTable) {
				t.Fatalf("Runs before the run table exists = %v, want ErrNoTable", err)
			}
			if err := h.CreateTable(ctx); err != nil {
				t.Fatal(err)
			}
			if err := h.CreateTable(ctx); err != nil {
				t.Fatalf("second CreateTable: %v", err)
			}
			long := strings.Repeat("ü", 600) // longer than any name column: stored mapped
			for tok := int64(1); tok <= 5; tok++ {
				run := dialects.Run{Name: h.StoredName("job"), Token: tok, Host: "node-a", Owner: "node-a:1:ab",
					Duration: time.Duration(tok) * 1500 * time.Millisecond, AtMost: 10 * time.Second, ExitCode: int(tok % 2)}
				if err := h.Record(ctx, run, 3); err != nil {
					t.Fatalf("Record token %d: %v", tok, err)
				}
			}
			if err := h.Record(ctx, dialects.Run{Name: h.StoredName(long), Token: 7, Host: "node-b", Owner: "o", Duration: time.Second, AtMost: time.Minute}, 3); err != nil {
				t.Fatalf("Record long name: %v", err)
			}
			runs, err := h.Runs(ctx, "job", 10)
			if err != nil {
				t.Fatal(err)
			}
			if got := tokens(runs); got != "5,4,3" {
				t.Fatalf("runs kept after 5 records with keep 3: tokens %s, want 5,4,3", got)
			}
			r := runs[0]
			if r.Host != "node-a" || r.Owner != "node-a:1:ab" || r.Duration != 7500*time.Millisecond || r.AtMost != 10*time.Second || r.ExitCode != 1 {
				t.Errorf("newest run read back as %+v", r)
			}
			// One reading of the database clock per statement: started_at
			// is exactly the duration before ended_at.
			for _, r := range runs {
				if d := r.EndedAt.Sub(r.StartedAt); d != r.Duration {
					t.Errorf("run %d: ended - started = %s, want exactly the duration %s (one reading of the database clock)", r.Token, d, r.Duration)
				}
			}
			if age := time.Since(r.EndedAt); age < -time.Hour || age > time.Hour {
				t.Errorf("ended at %s: not the database's now in UTC", r.EndedAt)
			}
			if r.Share() != 0.75 {
				t.Errorf("share %v, want 0.75", r.Share())
			}
			if limited, err := h.Runs(ctx, "job", 1); err != nil || tokens(limited) != "5" {
				t.Errorf("Runs limit 1 = %s, %v", tokens(limited), err)
			}
			if lr, err := h.Runs(ctx, long, 10); err != nil || tokens(lr) != "7" {
				t.Errorf("runs of the long name = %s, %v", tokens(lr), err)
			}
			last, err := h.LastRuns(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(last) != 2 || last["job"].Token != 5 || last[h.StoredName(long)].Token != 7 {
				t.Errorf("LastRuns = %v", last)
			}
			// The lock row was recreated: its tokens start again, and the
			// runs from before it that would sort above the new ones go.
			if err := h.Record(ctx, dialects.Run{Name: "job", Token: 4, Host: "node-c", Owner: "o", Duration: time.Millisecond, AtMost: time.Second}, 3); err != nil {
				t.Fatal(err)
			}
			if runs, err := h.Runs(ctx, "job", 10); err != nil || tokens(runs) != "4,3" || runs[0].Host != "node-c" {
				t.Errorf("after a token restart: %s (%v), want 4 (node-c),3", tokens(runs), err)
			}
		})
	}
}

func tokens(runs []dialects.Run) string {
	var s []string
	for _, r := range runs {
		s = append(s, strconv.FormatInt(r.Token, 10))
	}
	return strings.Join(s, ",")
}

func TestPauseLive(t *testing.T) {
	for name, db := range historyBackends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := testContext(t)
			tl, _ := freshTable(t, db)
			table := tl.Schema()
			tbl := dialects.Table{Name: table.Table}
			runner := dialects.Options{AtMost: time.Minute, Owner: "node-a"}

			if err := db.Pause(ctx, tbl, "job", dialects.PauseRequest{By: "alice", For: time.Hour}); err != nil {
				t.Fatal(err)
			}
			_, err := tl.Acquire(ctx, "job", runner)
			var held *dialects.HeldError
			if !errors.Is(err, dialects.ErrPaused) || !errors.Is(err, dialects.ErrHeld) || !errors.As(err, &held) {
				t.Fatalf("acquire of a paused lock = %v, want ErrPaused and ErrHeld", err)
			}
			if !strings.Contains(err.Error(), `"job" is paused by alice until `) {
				t.Errorf("message %q does not say who paused it and until when", err)
			}
			if left := time.Until(held.Until); left < 50*time.Minute || left > 70*time.Minute {
				t.Errorf("pause until %s, want about an hour from now", held.Until)
			}
			row, _, err := tl.Inspect(ctx, "job")
			if err != nil || dialects.TableRowState(row) != dialects.StatePaused {
				t.Errorf("row %+v (%v): state %s, want paused", row, err, dialects.TableRowState(row))
			}
			// A waiting runner does not wait out a pause.
			waiting := runner
			waiting.Wait = 10 * time.Minute
			start := time.Now()
			if _, err := tl.Acquire(ctx, "job", waiting); !errors.Is(err, dialects.ErrPaused) {
				t.Fatalf("waiting acquire = %v", err)
			}
			if took := time.Since(start); took > 2*time.Minute {
				t.Errorf("a waiting acquire of a paused lock took %s: it waited", took)
			}
			// The session strategy sees the pause through the check.
			if sl, err := db.SessionLocker(); err == nil {
				checked := dialects.WithPauseCheck(db, sl, tbl)
				if _, err := checked.Acquire(ctx, "job", runner); !errors.Is(err, dialects.ErrPaused) {
					t.Errorf("session acquire of a paused lock = %v, want ErrPaused", err)
				}
				lease, err := checked.Acquire(ctx, "other", runner)
				if err != nil {
					t.Fatalf("session acquire of a lock with no pause: %v", err)
				}
				_ = lease.Release(ctx)
			}
			// Another pauser replaces the pause.
			if err := db.Pause(ctx, tbl, "job", dialects.PauseRequest{By: "bob", For: 2 * time.Hour}); err != nil {
				t.Fatal(err)
			}
			if row, _, _ := tl.Inspect(ctx, "job"); row.Owner != "paused:bob" {
				t.Errorf("after bob's pause the owner is %q", row.Owner)
			}
			if err := db.Resume(ctx, tbl, "job"); err != nil {
				t.Fatal(err)
			}
			if err := db.Resume(ctx, tbl, "job"); !errors.Is(err, dialects.ErrNotPaused) {
				t.Errorf("second resume = %v, want ErrNotPaused", err)
			}
			lease, err := tl.Acquire(ctx, "job", runner)
			if err != nil {
				t.Fatalf("acquire after resume: %v", err)
			}
			// A running job keeps its lock: the pause is refused...
			err = db.Pause(ctx, tbl, "job", dialects.PauseRequest{By: "alice", For: time.Hour})
			if !errors.As(err, &held) || errors.Is(err, dialects.ErrPaused) || held.Holder != "node-a" {
				t.Fatalf("pause of a running job = %v, want HeldError naming node-a", err)
			}
			// ... or waits for the run to end.
			released := make(chan error, 1)
			go func() {
				time.Sleep(200 * time.Millisecond)
				released <- lease.Release(ctx)
			}()
			if err := db.Pause(ctx, tbl, "job", dialects.PauseRequest{By: "alice", For: time.Hour, Wait: 30 * time.Second}); err != nil {
				t.Fatalf("pause waiting for the run: %v", err)
			}
			if err := <-released; err != nil {
				t.Fatal(err)
			}
			if _, err := tl.Acquire(ctx, "job", runner); !errors.Is(err, dialects.ErrPaused) {
				t.Errorf("acquire after the waited pause = %v", err)
			}
		})
	}
}

// TestRunHistoryOtherPresetsLive: a ShedLock table's runs go to
// schedlock's own run table, each run without a fencing token taking the
// next token of its name, pruned like the native table's.
func TestRunHistoryOtherPresetsLive(t *testing.T) {
	for name, db := range historyBackends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := testContext(t)
			tl, err := db.TableLocker(dialects.Table{Preset: dialects.PresetShedlock, Name: uniqueName("shed_")})
			if err != nil {
				t.Fatal(err)
			}
			if err := tl.CreateTable(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = tl.(dialects.TableDropper).DropTable(testContext(t)) })
			h, err := tl.(dialects.RunHistorian).RunHistory()
			if err != nil {
				t.Fatal(err)
			}
			if !strings.EqualFold(h.Table(), "schedlock_runs") {
				t.Fatalf("run table of a ShedLock table = %q, want schedlock_runs", h.Table())
			}
			if err := h.CreateTable(ctx); err != nil {
				t.Fatal(err)
			}
			job := uniqueName("job-")
			lease, err := tl.Acquire(ctx, job, dialects.Options{AtMost: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if _, has := lease.Token(); has {
				t.Fatal("a ShedLock lease has a fencing token")
			}
			_ = lease.Release(ctx)
			for i := 1; i <= 4; i++ {
				run := dialects.Run{Name: h.StoredName(job), Host: "node-a", Owner: lease.Owner(),
					Duration: time.Duration(i) * 2 * time.Second, AtMost: 10 * time.Second, ExitCode: i}
				if err := h.Record(ctx, run, 3); err != nil {
					t.Fatalf("Record %d: %v", i, err)
				}
			}
			runs, err := h.Runs(ctx, job, 10)
			if err != nil {
				t.Fatal(err)
			}
			if tokens(runs) != "4,3,2" || runs[0].ExitCode != 4 || runs[0].Duration != 8*time.Second {
				t.Fatalf("runs %s (%+v), want tokens 4,3,2 with the newest exit 4, 8s", tokens(runs), runs)
			}
			if runs[0].Share() <= dialects.RunShareWarning {
				t.Errorf("an 8s run of 10s has share %v, want past the warning", runs[0].Share())
			}
			last, err := h.LastRuns(ctx)
			if err != nil || last[h.StoredName(job)].Token != 4 {
				t.Errorf("LastRuns[%s] = %+v, %v", job, last[h.StoredName(job)], err)
			}
		})
	}
}
