package dialects

import (
	"context"
	"time"
)

// Blockers: when `schedlock run` gives up on a lock table, or `locks ls`
// cannot read one, the first thing an operator needs is the session that
// keeps it waiting — a migration holding ACCESS EXCLUSIVE, a console left
// in an open transaction on a lock row. A LockAdmin that can name such
// sessions implements BlockerFinder.

// Blocker is a server session that keeps others from a lock table: it
// holds a lock on the table or on one of its rows that a reader or writer
// of the table waits for, or would wait for.
type Blocker struct {
	// Holder is the session: id, user, client address, application and
	// when it connected (Since).
	Holder
	// TxStart is when its open transaction began (UTC); zero when unknown.
	TxStart time.Time
	// State is what the server says the session is doing: "idle in
	// transaction", "active", "Sleep", …
	State string
	// Query is the statement it is running, or ran last where the server
	// keeps that; "" when unknown.
	Query string
	// Holds says what it holds, in the server's words: "AccessExclusiveLock
	// on schedlock", "row lock in schedlock".
	Holds string
	// Table is the lock table it blocks; "" when only its waiters are
	// known (a session blocking schedlock's own connections).
	Table string
	// Waiters are the ids of the sessions waiting for it now.
	Waiters []string
	// Terminate is the statement that ends the session (and rolls back
	// its transaction), e.g. "SELECT pg_terminate_backend(4242)".
	Terminate string
	// DBNow is the database's now when it was read; zero when unknown.
	DBNow time.Time
}

// BlockerFinder is implemented by LockAdmins that can name the sessions
// blocking lock tables. It reads only the server's views (and, where they
// show a row lock only while someone waits for it, waits for it itself
// for at most a second, in a transaction it rolls back): it answers while
// the tables themselves cannot be read.
type BlockerFinder interface {
	// Blockers lists the sessions, other than the caller's own, that hold
	// a lock keeping readers or writers out of one of tables (lock table
	// names as ListOptions resolve them; none: the KnownTables), or that
	// block a session waiting on one of them or one of schedlock's own
	// connections. Sorted by session id; [] when there is none.
	Blockers(ctx context.Context, tables []string) ([]Blocker, error)
}

// FindBlockers asks admin for the sessions blocking tables; nil, nil when
// admin cannot tell (nil, or no BlockerFinder).
func FindBlockers(ctx context.Context, admin LockAdmin, tables []string) ([]Blocker, error) {
	bf, ok := admin.(BlockerFinder)
	if admin == nil || !ok {
		return nil, nil
	}
	return bf.Blockers(ctx, tables)
}

// KnownTableNames are the names of tables, or of the KnownTables when
// tables is empty.
func KnownTableNames(tables []Table) []string {
	var out []string
	for _, t := range tables {
		if t.Name != "" {
			out = append(out, t.Name)
		} else if t.Preset != "" {
			out = append(out, defaultTableName(t.Preset))
		}
	}
	if len(out) == 0 {
		for _, t := range KnownTables() {
			out = append(out, t.Name)
		}
	}
	return out
}
