package claim_test

import (
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/claim"
)

// A mistyped SQLite path is refused as lock.Open refuses it, and nothing
// is created; x-create-file=true creates it.
func TestOpenRefusesMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jbos.db")
	q, err := claim.Open(t.Context(), "sqlite:"+path, claim.Options{})
	if err == nil {
		q.Close()
		t.Fatal("Open of a missing file succeeded")
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("error %q does not match fs.ErrNotExist", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the refused Open left %s behind: %v", path, err)
	}
	q, err = claim.Open(t.Context(), "sqlite:"+path+"?x-create-file=true", claim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	q.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("x-create-file=true did not create %s: %v", path, err)
	}
}

// Open refuses a status mapping that cannot tell the states apart, and a
// mapped column the table lacks, with ErrInvalid; an optional role left
// empty is not required of the table.
func TestOpenChecksTheMapping(t *testing.T) {
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "orders.db") + "?x-create-file=true"
	setup, err := claim.Open(t.Context(), dsn, claim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_ = setup.Close()
	db, err := sql.Open("sqlite", strings.TrimSuffix(strings.TrimPrefix(dsn, "sqlite:"), "?x-create-file=true"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE t_order (order_id INTEGER PRIMARY KEY, state TEXT NOT NULL, run_at TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, worker TEXT, lease_end TEXT, row_version INTEGER NOT NULL DEFAULT 0)"); err != nil {
		t.Fatal(err)
	}
	cols := claim.Columns{ID: "order_id", Status: "state", DueAt: "run_at", Retries: "attempts", Owner: "worker", ClaimedUntil: "lease_end", Version: "row_version"}
	for _, tc := range []struct {
		opts claim.Options
		want string
	}{
		{claim.Options{Table: "t_order", Columns: cols, Statuses: claim.Statuses{Ready: "WAIT", Claimed: "WAIT"}}, "must all differ"},
		{claim.Options{Table: "t_order", Columns: cols, Statuses: claim.Statuses{Ready: "Done"}}, "must all differ"},
		{claim.Options{Table: "t_order", Columns: cols, Statuses: claim.Statuses{Ready: "WAIT\n"}}, "control character"},
		{claim.Options{Table: "t_order", Columns: func() claim.Columns { c := cols; c.Priority = "prio"; return c }()}, "prio (priority)"},
	} {
		q, err := claim.Open(t.Context(), dsn, tc.opts)
		if err == nil {
			_ = q.Close()
		}
		if !errors.Is(err, claim.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%+v): %v; want ErrInvalid saying %q", tc.opts.Statuses, err, tc.want)
		}
	}
	q, err := claim.Open(t.Context(), dsn, claim.Options{Table: "t_order", Columns: cols, Statuses: claim.Statuses{Ready: "WAIT", Claimed: "RUNNING", Done: "DONE", Failed: "FAILED"}})
	if err != nil {
		t.Fatalf("Open of a table without optional columns: %v", err)
	}
	defer q.Close()
	if err := q.Add(t.Context(), claim.NewTask{}); err != nil {
		t.Fatal(err)
	}
	var state string
	if err := db.QueryRow("SELECT state FROM t_order").Scan(&state); err != nil || state != "WAIT" {
		t.Fatalf("Add wrote state %q (%v); want WAIT", state, err)
	}
}
