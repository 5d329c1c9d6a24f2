package postgres

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// blockerOf returns the blocker whose session is pid, failing t when
// Blockers errs or does not name it.
func blockerOf(t *testing.T, a *LockAdmin, tables []string, pid int64) dialects.Blocker {
	t.Helper()
	ctx, cancel := context.WithTimeout(testCtx(t), 10*time.Second)
	defer cancel()
	got, err := a.Blockers(ctx, tables)
	if err != nil {
		t.Fatalf("Blockers: %v", err)
	}
	for _, b := range got {
		if b.SessionID == strconv.FormatInt(pid, 10) {
			return b
		}
	}
	t.Fatalf("Blockers = %+v: backend %d is not among them", got, pid)
	return dialects.Blocker{}
}

// A session holding ACCESS EXCLUSIVE on a lock table, and one whose open
// transaction locks a row of it, are named with what they hold, their
// transaction start, their statement and the statement that ends them;
// a session waiting behind one is its waiter. Neither is named once its
// transaction ends.
func TestBlockersLive(t *testing.T) {
	db := liveDB(t)
	ctx := testCtx(t)
	table := unique("blk_")
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+table+" (name varchar(64) PRIMARY KEY, v int)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.Exec("DROP TABLE " + table) })
	if _, err := db.ExecContext(ctx, "INSERT INTO "+table+" VALUES ('job', 1), ('other', 2)"); err != nil {
		t.Fatal(err)
	}
	a := &LockAdmin{DB: db}
	tables := []string{table, "no_such_table_here"}
	// Other tests' schedlock connections may wait on their own tables
	// meanwhile: only this table's blockers are counted.
	none := func(when string) {
		t.Helper()
		got, err := a.Blockers(ctx, tables)
		if err != nil {
			t.Fatalf("Blockers %s: %v", when, err)
		}
		for _, b := range got {
			if b.Table == table {
				t.Errorf("Blockers %s names %+v", when, b)
			}
		}
	}
	none("with nobody holding anything")

	t.Run("table lock", func(t *testing.T) {
		holder := conn(t, db)
		pid := backendPID(t, holder)
		if _, err := holder.ExecContext(ctx, "SET application_name = 'migration-tool'"); err != nil {
			t.Fatal(err)
		}
		if _, err := holder.ExecContext(ctx, "BEGIN"); err != nil {
			t.Fatal(err)
		}
		if _, err := holder.ExecContext(ctx, "LOCK TABLE "+table+" IN ACCESS EXCLUSIVE MODE"); err != nil {
			t.Fatal(err)
		}
		b := blockerOf(t, a, tables, pid)
		if !strings.Contains(b.Holds, "AccessExclusiveLock on "+table) || b.Table != table {
			t.Errorf("holds %q on %q, want AccessExclusiveLock on %s", b.Holds, b.Table, table)
		}
		if b.Application != "migration-tool" || b.User == "" || b.Client == "" || b.Since.IsZero() {
			t.Errorf("session %+v: want its application, user, client and start", b.Holder)
		}
		if b.TxStart.IsZero() || b.TxStart.Before(b.Since) || b.State != "idle in transaction" || !strings.Contains(b.Query, "LOCK TABLE") {
			t.Errorf("transaction start %s, state %q, query %q", b.TxStart, b.State, b.Query)
		}
		if b.Terminate != "SELECT pg_terminate_backend("+strconv.FormatInt(pid, 10)+")" {
			t.Errorf("terminate %q", b.Terminate)
		}
		// A reader of the table waits behind it and is named its waiter.
		waiter := conn(t, db)
		wpid := backendPID(t, waiter)
		if _, err := waiter.ExecContext(ctx, "SET application_name = 'schedlock locks ls'"); err != nil {
			t.Fatal(err)
		}
		readCtx, stop := context.WithCancel(ctx)
		defer stop()
		read := make(chan error, 1)
		go func() {
			_, err := waiter.ExecContext(readCtx, "SELECT count(*) FROM "+table)
			read <- err
		}()
		deadline := time.Now().Add(30 * time.Second)
		for {
			b = blockerOf(t, a, tables, pid)
			if slices.Contains(b.Waiters, strconv.FormatInt(wpid, 10)) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the waiting reader %d is not among the waiters %v", wpid, b.Waiters)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if _, err := holder.ExecContext(ctx, "ROLLBACK"); err != nil {
			t.Fatal(err)
		}
		if err := <-read; err != nil {
			t.Fatalf("the reader after the rollback: %v", err)
		}
		none("after the rollback")
	})

	t.Run("row lock", func(t *testing.T) {
		holder := conn(t, db)
		pid := backendPID(t, holder)
		if _, err := holder.ExecContext(ctx, "BEGIN"); err != nil {
			t.Fatal(err)
		}
		if _, err := holder.ExecContext(ctx, "SELECT * FROM "+table+" WHERE name = 'job' FOR UPDATE"); err != nil {
			t.Fatal(err)
		}
		b := blockerOf(t, a, tables, pid)
		if b.Holds != "row lock in "+table || b.Table != table || b.TxStart.IsZero() || !strings.Contains(b.Query, "FOR UPDATE") {
			t.Errorf("row lock holder %+v", b)
		}
		if _, err := holder.ExecContext(ctx, "COMMIT"); err != nil {
			t.Fatal(err)
		}
		none("after the commit")
	})
}
