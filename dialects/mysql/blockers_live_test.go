package mysql

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// A connection whose open transaction locks a row of a lock table is
// named, although nobody waits for it (Blockers waits for the rows
// itself), with its user, client, transaction start, statement and the
// KILL that ends it; a connection waiting behind it is its waiter; once
// the transaction ends nobody is named, and the probe left no lock behind.
func TestBlockersLive(t *testing.T) {
	b := openDetected(t)
	db := b.SQL
	ctx := testContext(t)
	table := uniqueName("blk_")
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+table+" (name VARCHAR(64) PRIMARY KEY, v INT) ENGINE=InnoDB"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.Exec("DROP TABLE " + table) })
	if _, err := db.ExecContext(ctx, "INSERT INTO "+table+" VALUES ('job', 1), ('other', 2)"); err != nil {
		t.Fatal(err)
	}
	a := b.NewLockAdmin(dialects.SessionNames{}).(*LockAdmin)
	tables := []string{table, "no_such_table_here"}
	ours := func(when string) []dialects.Blocker {
		t.Helper()
		bctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		got, err := a.Blockers(bctx, tables)
		if err != nil {
			t.Fatalf("Blockers %s: %v", when, err)
		}
		var out []dialects.Blocker
		for _, bl := range got {
			if bl.Table == table {
				out = append(out, bl)
			}
		}
		return out
	}
	if got := ours("with nobody holding anything"); len(got) != 0 {
		t.Fatalf("Blockers with nobody holding anything = %+v", got)
	}

	holder := conn(t, db)
	id := connectionID(t, holder)
	if _, err := holder.ExecContext(ctx, "START TRANSACTION"); err != nil {
		t.Fatal(err)
	}
	if _, err := holder.ExecContext(ctx, "SELECT * FROM "+table+" WHERE name = 'job' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	got := ours("with a row locked")
	if len(got) != 1 || got[0].SessionID != id {
		t.Fatalf("Blockers with connection %s locking a row = %+v", id, got)
	}
	bl := got[0]
	if !strings.Contains(bl.Holds, "lock in "+table) || bl.User == "" || bl.Client == "" || bl.TxStart.IsZero() || bl.Terminate != "KILL "+id || len(bl.Waiters) != 0 {
		t.Errorf("blocker %+v", bl)
	}
	if d := bl.DBNow.Sub(bl.TxStart); d < -2*time.Second || d > time.Minute {
		t.Errorf("transaction start %s is not about the database's now %s (UTC)", bl.TxStart, bl.DBNow)
	}
	// The probe rolled back: the other row is free to lock at once.
	if _, err := db.ExecContext(ctx, "UPDATE "+table+" SET v = 3 WHERE name = 'other'"); err != nil {
		t.Fatalf("the row the probe read is still locked: %v", err)
	}

	waiter := conn(t, db)
	wid := connectionID(t, waiter)
	waitCtx, stop := context.WithCancel(ctx)
	defer stop()
	waited := make(chan error, 1)
	go func() {
		_, err := waiter.ExecContext(waitCtx, "UPDATE "+table+" SET v = 9 WHERE name = 'job'")
		waited <- err
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got = ours("with a waiter")
		if len(got) == 1 && slices.Contains(got[0].Waiters, wid) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the waiting connection %s is not a waiter of %+v", wid, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := holder.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatalf("the waiter after the commit: %v", err)
	}
	// InnoDB's information_schema lock views are a cache refreshed at
	// most every 0.1 s: a read just after the commit may still show it.
	deadline = time.Now().Add(10 * time.Second)
	for {
		got = ours("after the commit")
		if len(got) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Blockers 10 s after the commit = %+v", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
