package claimtable

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// RowState is a task row's state as `claims ls` shows it.
type RowState string

// The row states.
const (
	StateReady   RowState = "ready"
	StateClaimed RowState = "claimed" // held within its claim lease
	StateOverdue RowState = "overdue" // claimed, lease past: the worker died or hangs
	StateDone    RowState = "done"
	StateFailed  RowState = "failed" // retries used up
)

// Row is one task row in a listing.
type Row struct {
	ID           int64     `json:"id"`
	Type         string    `json:"type"`
	State        RowState  `json:"state"`
	Owner        string    `json:"owner"`
	Due          time.Time `json:"due"`
	ClaimedUntil time.Time `json:"claimed_until"` // zero when not claimed
	Retries      int       `json:"retries"`
	MaxRetries   int       `json:"max_retries"`
}

// ListOptions select the rows of List.
type ListOptions struct {
	// Owner keeps one worker's rows; empty: every owner.
	Owner string
	// All lists ready and done rows too; else claimed, overdue and failed.
	All bool
	// Limit bounds the rows read (default 1000).
	Limit int
}

// Listing is what List found.
type Listing struct {
	Now  time.Time `json:"now"` // the database clock the states were judged by (the host clock when no row was read)
	Rows []Row     `json:"rows"`
}

// List reads the rows opts selects, ordered by state, owner and id, with
// their states judged by the database clock.
func (cl *Claimer) List(ctx context.Context, opts ListOptions) (*Listing, error) {
	if opts.Limit <= 0 {
		opts.Limit = 1000
	}
	col, s := cl.c.c(), cl.c.t.Statuses
	q := &query{b: cl.b}
	// The database says which value a row's status is, by its own
	// comparison (a case-insensitive collation, blank-padded CHAR).
	state := "CASE WHEN " + col.Status + " = " + q.arg(s.Claimed) + " THEN 1 WHEN " + col.Status + " = " + q.arg(s.Failed) +
		" THEN 2 WHEN " + col.Status + " = " + q.arg(s.Done) + " THEN 3 ELSE 0 END"
	statuses := []string{q.arg(s.Claimed), q.arg(s.Failed)}
	if opts.All {
		statuses = append(statuses, q.arg(s.Ready), q.arg(s.Done))
	}
	where := col.Status + " IN (" + strings.Join(statuses, ", ") + ")"
	if opts.Owner != "" {
		where += " AND " + col.Owner + " = " + q.arg(opts.Owner)
	}
	opt := func(name, zero string) string {
		if name == "" {
			return zero
		}
		return name
	}
	sel := Select{
		Columns: []string{col.ID, opt(col.Type, "''"), state, "COALESCE(" + col.Owner + ", '')", cl.b.EpochMs(col.DueAt),
			cl.b.EpochMs(col.ClaimedUntil), col.Retries, opt(col.MaxRetries, "-1"), cl.b.EpochMs(cl.b.Now())},
		Table: cl.c.t.Name, Where: where, OrderBy: col.Status + ", " + col.Owner + ", " + col.ID,
	}
	sel.Limit = q.arg(int64(opts.Limit))
	rows, err := cl.db.QueryContext(ctx, cl.b.Select(sel), q.args...)
	if err != nil {
		return nil, cl.wrap("list", err)
	}
	defer rows.Close()
	out := &Listing{Rows: []Row{}}
	for rows.Next() {
		var r Row
		var typ sql.NullString
		var owner sql.NullString
		var status int
		var due, until sql.NullInt64
		var now int64
		if err := rows.Scan(&r.ID, &typ, &status, &owner, &due, &until, &r.Retries, &r.MaxRetries, &now); err != nil {
			return nil, cl.wrap("list", err)
		}
		r.Owner = owner.String
		r.Type = typ.String
		if r.MaxRetries < 0 {
			r.MaxRetries = cl.opts.MaxRetries
		}
		r.Due = time.UnixMilli(due.Int64).UTC()
		out.Now = time.UnixMilli(now).UTC()
		if until.Valid {
			r.ClaimedUntil = time.UnixMilli(until.Int64).UTC()
		}
		switch status {
		case 1:
			r.State = StateClaimed
			if until.Valid && until.Int64 <= now {
				r.State = StateOverdue
			}
		case 2:
			r.State = StateFailed
		case 3:
			r.State = StateDone
		default:
			r.State = StateReady
		}
		out.Rows = append(out.Rows, r)
	}
	if err := rows.Err(); err != nil {
		return nil, cl.wrap("list", err)
	}
	if out.Now.IsZero() {
		out.Now = time.Now().UTC() // no row was read: the host clock
	}
	return out, nil
}

// Unmapped counts the rows whose status is none of the table's four
// status values (or is NULL) and returns the least such value ("" for
// NULL): a listing that finds nothing may be reading a table whose status
// values are not the ones mapped.
func (cl *Claimer) Unmapped(ctx context.Context) (n int64, example string, err error) {
	col, s := cl.c.c(), cl.c.t.Statuses
	q := &query{b: cl.b}
	where := col.Status + " IS NULL OR " + col.Status + " NOT IN (" +
		strings.Join([]string{q.arg(s.Ready), q.arg(s.Claimed), q.arg(s.Done), q.arg(s.Failed)}, ", ") + ")"
	text := cl.b.Select(Select{Columns: []string{"COUNT(*)", "MIN(" + col.Status + ")"}, Table: cl.c.t.Name, Where: where})
	var least sql.NullString
	if err := cl.db.QueryRowContext(ctx, text, q.args...).Scan(&n, &least); err != nil {
		return 0, "", cl.wrap("list", err)
	}
	return n, least.String, nil
}

// ReleaseOptions guard ReleaseOwner.
type ReleaseOptions struct {
	// Force releases rows still within their claim lease too (a worker
	// that is alive loses them, and they may run twice); without it only
	// overdue rows are given back.
	Force bool
}

// ReleaseOwner gives owner's claimed rows back to the ready rows
// (unowned, due as before, retries unchanged): only the overdue ones
// unless opts.Force. It returns how many rows it released.
func (cl *Claimer) ReleaseOwner(ctx context.Context, owner string, opts ReleaseOptions) (int64, error) {
	if err := dialects.CheckOwner(owner); err != nil {
		return 0, err
	}
	col, s := cl.c.c(), cl.c.t.Statuses
	q := &query{b: cl.b}
	set := []string{col.Status + " = " + q.arg(s.Ready), col.Owner + " = NULL", col.ClaimedUntil + " = NULL", col.Version + " = " + col.Version + " + 1"}
	if col.UpdatedAt != "" {
		set = append(set, col.UpdatedAt+" = "+cl.b.Now())
	}
	where := col.Status + " = " + q.arg(s.Claimed) + " AND " + col.Owner + " = " + q.arg(owner)
	if !opts.Force {
		where += " AND " + col.ClaimedUntil + " <= " + cl.b.Now()
	}
	res, err := cl.db.ExecContext(ctx, "UPDATE "+cl.c.t.Name+" SET "+join(set)+" WHERE "+where, q.args...)
	if err != nil {
		return 0, cl.wrap("release", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, cl.wrap("release", fmt.Errorf("rows released unknown: %w", err))
	}
	return n, nil
}
