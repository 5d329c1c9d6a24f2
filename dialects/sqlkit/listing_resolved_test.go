package sqlkit_test

import (
	"context"
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

// A listing given an earlier listing's tables as Resolved reads those
// tables alone: a table created since is not looked for, one dropped
// since fails the listing; without Resolved both are found again.
func TestListLocksResolvedTables(t *testing.T) {
	ctx := context.Background()
	db := openSQLiteAdmin(t)
	execAll(t, db.SQL, shedlockSQLite,
		`INSERT INTO shedlock VALUES ('report', '2999-01-01 00:00:00.000', '2024-01-01 00:00:00.000', 'node1')`)
	first, err := db.ListLocks(ctx, dialects.ListOptions{All: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Tables) != 1 || len(first.Locks) != 1 {
		t.Fatalf("first listing: tables %v, locks %v", first.Tables, first.Locks)
	}
	again := dialects.ListOptions{All: true, Tables: first.Tables, Resolved: true}
	execAll(t, db.SQL, liquibaseSQLite, `INSERT INTO DATABASECHANGELOGLOCK VALUES (1, 1, '2024-01-01 00:00:00', 'ci')`)
	l, err := db.ListLocks(ctx, again)
	if err != nil {
		t.Fatal(err)
	}
	if got := byName(l.Locks); len(got) != 1 || got["report"].State != dialects.StateHeld {
		t.Errorf("resolved listing: %v, want report alone", l.Locks)
	}
	l, err = db.ListLocks(ctx, dialects.ListOptions{All: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := byName(l.Locks); len(got) != 2 || got[dialects.LiquibaseLockName].State != dialects.StateHeld {
		t.Errorf("listing that looks again: %v, want report and liquibase", l.Locks)
	}
	execAll(t, db.SQL, `DROP TABLE shedlock`)
	if l, err := db.ListLocks(ctx, again); err == nil {
		t.Errorf("a resolved table dropped since: listed %v", l.Locks)
	}
}
