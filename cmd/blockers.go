package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/elide"
)

// blockerTimeout bounds the lookup of the sessions that block a lock
// table by locks ls and detect (MariaDB's lookup may wait a second per
// table); runBlockerTimeout the one of a run that gave up, which delays its
// exit, on its one table.
const (
	blockerTimeout    = 10 * time.Second
	runBlockerTimeout = 3 * time.Second
)

// blockerQueryWidth is how much of a blocker's statement a message quotes.
const blockerQueryWidth = 120

// findBlockers asks backend b for the sessions blocking tables (none: the
// known lock tables), within bound, on ctx, or detached from it when it
// has ended already: a run that gave up asks after its timeout. It is nil, nil
// when the backend cannot tell; a lookup that failed (a missing privilege,
// most often) gives its error, which callers mention only where it
// explains a failure of their own.
func findBlockers(ctx context.Context, b dialects.Backend, tables []dialects.Table, bound time.Duration) ([]dialects.Blocker, error) {
	lb, ok := b.(dialects.LockBreaker)
	if b == nil || !ok {
		return nil, nil
	}
	if ctx.Err() != nil {
		ctx = context.WithoutCancel(ctx) // a run that gave up asks afterwards
	}
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	return dialects.FindBlockers(ctx, lb.LockAdmin(), dialects.KnownTableNames(tables))
}

// lookupFailed is the clause that says the blocking sessions could not be
// looked up, and why.
func lookupFailed(err error) string {
	return "the sessions that may block it could not be looked up: " + err.Error()
}

// blockersOnTables are the blockers that hold a lock on a table, or on a
// row of one (rather than only blocking a waiter).
func blockersOnTables(bs []dialects.Blocker) []dialects.Blocker {
	var out []dialects.Blocker
	for _, b := range bs {
		if b.Holds != "" {
			out = append(out, b)
		}
	}
	return out
}

// blockerText says who b is and how to end it, in one line: "session 4242
// (user app, application "psql", client 10.0.0.5) holds AccessExclusiveLock
// on schedlock in a transaction open since 2026-12-06T01:02:03Z (5m ago),
// idle in transaction, last statement "LOCK TABLE schedlock"; sessions 77
// wait for it; end it with: SELECT pg_terminate_backend(4242)".
func blockerText(b dialects.Blocker) string {
	var who []string
	if b.User != "" {
		who = append(who, "user "+b.User)
	}
	if b.Application != "" {
		who = append(who, fmt.Sprintf("application %q", b.Application))
	}
	if b.Client != "" {
		who = append(who, "client "+b.Client)
	}
	if !b.Since.IsZero() {
		who = append(who, "connected "+b.Since.UTC().Format(time.RFC3339))
	}
	s := "session " + b.SessionID
	if len(who) > 0 {
		s += " (" + strings.Join(who, ", ") + ")"
	}
	switch {
	case b.Holds != "":
		s += " holds " + b.Holds
	case b.Table != "":
		s += " blocks lock table " + b.Table
	default:
		s += " blocks schedlock's sessions"
	}
	if !b.TxStart.IsZero() {
		s += " in a transaction open since " + b.TxStart.UTC().Format(time.RFC3339)
		if !b.DBNow.IsZero() && b.DBNow.After(b.TxStart) {
			s += " (" + humanDuration(b.DBNow.Sub(b.TxStart).Truncate(time.Second)) + " ago)"
		}
	}
	if b.State != "" {
		s += ", " + b.State
	}
	if q := strings.Join(strings.Fields(b.Query), " "); q != "" {
		s += fmt.Sprintf(", statement %q", elide.String(q, blockerQueryWidth))
	}
	switch len(b.Waiters) {
	case 0:
	case 1:
		s += "; session " + b.Waiters[0] + " waits for it"
	default:
		s += "; sessions " + strings.Join(b.Waiters, ", ") + " wait for it"
	}
	if b.Terminate != "" {
		s += "; end it with: " + b.Terminate
	}
	return s
}

// blockersText joins the blockers' texts; "" when there is none.
func blockersText(bs []dialects.Blocker) string {
	texts := make([]string, len(bs))
	for i, b := range bs {
		texts[i] = blockerText(b)
	}
	return strings.Join(texts, "; and ")
}

// runBlockers is what `run` says, when it gives up, about the sessions
// keeping lock table t (the known tables when t is the session strategy's
// zero Table) from it: "session 4242 (…) holds …; end it with: …", or ""
// when nobody blocks it; why it cannot tell when the lookup fails.
func runBlockers(db dialects.Backend, t dialects.Table) func(context.Context) string {
	return func(ctx context.Context) string {
		var tables []dialects.Table
		if t != (dialects.Table{}) {
			tables = []dialects.Table{t}
		}
		found, err := findBlockers(ctx, db, tables, runBlockerTimeout)
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			return "" // a database that does not answer: the run's own message says enough
		case err != nil:
			return lookupFailed(err)
		}
		return blockersText(found)
	}
}
