package sqlkit_test

import (
	"errors"
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

// On every database: the newest successful run is the newest that exited
// 0, the schedule comes back as recorded (none as none), and a run table
// created before the schedule column records runs without it until
// CreateTable adds the column.
func TestRunHistoryScheduleLive(t *testing.T) {
	for name, db := range historyBackends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := testContext(t)
			tl, h := freshTable(t, db)
			if err := h.CreateTable(ctx); err != nil {
				t.Fatal(err)
			}
			for i, exit := range []int{0, 0, 1, 113} { // tokens 1..4
				run := dialects.Run{Name: "job", Token: int64(i + 1), Host: "h", Owner: "o", ExitCode: exit, Schedule: "*/5 * * * *"}
				if err := h.Record(ctx, run, 10); err != nil {
					t.Fatal(err)
				}
			}
			if err := h.Record(ctx, dialects.Run{Name: "unscheduled", Token: 1, Host: "h", Owner: "o"}, 10); err != nil {
				t.Fatal(err)
			}
			if err := h.Record(ctx, dialects.Run{Name: "failing", Token: 1, Host: "h", Owner: "o", ExitCode: 2}, 10); err != nil {
				t.Fatal(err)
			}
			// A run without a token (a preset or a session lock without
			// one) is numbered by the run table, its schedule kept.
			if err := h.Record(ctx, dialects.Run{Name: "tokenless", Host: "h", Owner: "o", Schedule: "@hourly"}, 10); err != nil {
				t.Fatal(err)
			}
			if err := h.Record(ctx, dialects.Run{Name: "tokenless", Host: "h", Owner: "o", ExitCode: 1, Schedule: "@hourly"}, 10); err != nil {
				t.Fatal(err)
			}
			ok, err := h.LastSuccesses(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(ok) != 3 || ok["job"].Token != 2 || ok["job"].Schedule != "*/5 * * * *" || ok["unscheduled"].Schedule != "" || ok["tokenless"].Token != 1 || ok["tokenless"].Schedule != "@hourly" {
				t.Errorf("LastSuccesses = %+v, want job's token 2 and unscheduled, not failing", ok)
			}
			if last, err := h.LastRuns(ctx); err != nil || last["job"].Token != 4 || last["failing"].ExitCode != 2 || last["tokenless"].Token != 2 || last["tokenless"].Schedule != "@hourly" {
				t.Errorf("LastRuns = %+v, %v", last, err)
			}

			// A run table from before the schedule column.
			if _, err := db.SQL.ExecContext(ctx, "ALTER TABLE "+h.Table()+" DROP COLUMN schedule_spec"); err != nil {
				t.Fatal(err)
			}
			old, err := tl.(dialects.RunHistorian).RunHistory()
			if err != nil {
				t.Fatal(err)
			}
			err = old.Record(ctx, dialects.Run{Name: "job", Token: 5, Host: "h", Owner: "o", Schedule: "@every 5m"}, 10)
			var nocol *dialects.NoScheduleColumnError
			if !errors.As(err, &nocol) {
				t.Fatalf("Record of a scheduled run on the old table = %v, want NoScheduleColumnError", err)
			}
			if runs, err := old.Runs(ctx, "job", 1); err != nil || len(runs) != 1 || runs[0].Token != 5 || runs[0].Schedule != "" {
				t.Fatalf("the run on the old table: %+v, %v", runs, err)
			}
			if ok, err := old.LastSuccesses(ctx); err != nil || ok["job"].Token != 5 {
				t.Errorf("LastSuccesses on the old table = %+v, %v", ok, err)
			}
			if err := old.CreateTable(ctx); err != nil {
				t.Fatalf("CreateTable adding the schedule column: %v", err)
			}
			if err := old.Record(ctx, dialects.Run{Name: "job", Token: 6, Host: "h", Owner: "o", Schedule: "@every 5m"}, 10); err != nil {
				t.Fatalf("Record after the column was added: %v", err)
			}
			if last, err := old.LastRuns(ctx); err != nil || last["job"].Token != 6 || last["job"].Schedule != "@every 5m" {
				t.Errorf("LastRuns after the column was added = %+v, %v", last, err)
			}
		})
	}
}
