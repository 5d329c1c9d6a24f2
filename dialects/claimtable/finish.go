package claimtable

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// ErrNotClaimed matches a Complete, Fail, GiveBack or Extend of a row
// the worker no longer holds: another worker claimed it after its lease
// ran out, an administrator released it, or it was finished already. It
// also matches dialects.ErrNotOwner. The row is left unchanged.
var ErrNotClaimed = fmt.Errorf("%w: the row is no longer claimed by this worker", dialects.ErrNotOwner)

// ErrNoTask matches an operation on a row that does not exist.
var ErrNoTask = errors.New("no such task row")

// Complete marks t done. It fails with ErrNotClaimed, changing nothing,
// when t's owner no longer holds the row at t's version.
func (cl *Claimer) Complete(ctx context.Context, t *Task) error {
	col := cl.c.c()
	return cl.owned(ctx, "complete", t, func(q *query) []string {
		return []string{col.Status + " = " + q.arg(cl.c.t.Statuses.Done), col.ClaimedUntil + " = NULL"}
	})
}

// GiveBack returns t to the ready rows, unclaimed and due as before,
// without counting a failure.
func (cl *Claimer) GiveBack(ctx context.Context, t *Task) error {
	col := cl.c.c()
	return cl.owned(ctx, "give back", t, func(q *query) []string {
		return []string{col.Status + " = " + q.arg(cl.c.t.Statuses.Ready), col.Owner + " = NULL", col.ClaimedUntil + " = NULL"}
	})
}

// Fail counts a failure of t: while its retries last the row is ready
// again after Options.Backoff(failures), unclaimed; after that it is
// failed for good (keeping its owner, for `claims ls`).
func (cl *Claimer) Fail(ctx context.Context, t *Task) error {
	col, s := cl.c.c(), cl.c.t.Statuses
	backoff := cl.opts.Backoff(t.Retries + 1)
	return cl.owned(ctx, "fail", t, func(q *query) []string {
		maxRetries := col.MaxRetries
		if maxRetries == "" {
			maxRetries = q.arg(int64(cl.opts.MaxRetries))
		}
		exhausted := col.Retries + " + 1 > " + maxRetries
		// Every CASE reads the old retries: MySQL evaluates assignments in
		// order, each seeing the ones before, so retries is set last.
		set := []string{
			col.Status + " = CASE WHEN " + exhausted + " THEN " + q.arg(s.Failed) + " ELSE " + q.arg(s.Ready) + " END",
		}
		if col.MaxRetries == "" {
			maxRetries = q.arg(int64(cl.opts.MaxRetries))
			exhausted = col.Retries + " + 1 > " + maxRetries
		}
		set = append(set, col.DueAt+" = CASE WHEN "+exhausted+" THEN "+col.DueAt+" ELSE "+cl.b.PlusMs(cl.b.Now(), q.arg(backoff.Milliseconds()))+" END")
		if col.MaxRetries == "" {
			maxRetries = q.arg(int64(cl.opts.MaxRetries))
			exhausted = col.Retries + " + 1 > " + maxRetries
		}
		set = append(set, col.Owner+" = CASE WHEN "+exhausted+" THEN "+col.Owner+" ELSE NULL END",
			col.ClaimedUntil+" = NULL", col.Retries+" = "+col.Retries+" + 1")
		return set
	})
}

// Extend renews t's claim lease to d from the database's now (0: the
// claimer's lease), for a task that runs longer than expected. It moves
// t.Version on.
func (cl *Claimer) Extend(ctx context.Context, t *Task, d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("%w: lease extension must not be negative, got %s", dialects.ErrInvalid, d)
	}
	if d == 0 {
		d = cl.opts.Lease
	}
	col := cl.c.c()
	err := cl.owned(ctx, "extend", t, func(q *query) []string {
		return []string{col.ClaimedUntil + " = " + cl.b.PlusMs(cl.b.Now(), q.arg(d.Milliseconds()))}
	})
	if err == nil {
		t.ClaimedUntil = time.Now().Add(d).UTC() // host estimate; the database holds the exact end
	}
	return err
}

// owned runs UPDATE … SET set, version + 1 on t's row where t's owner
// holds it at t's version, and moves t.Version on. A row no longer held
// is refused with ErrNotClaimed and left unchanged.
func (cl *Claimer) owned(ctx context.Context, op string, t *Task, set func(q *query) []string) error {
	if t == nil {
		return fmt.Errorf("%w: %s of a nil task", dialects.ErrInvalid, op)
	}
	if err := dialects.CheckOwner(t.Owner); err != nil {
		return err
	}
	col := cl.c.c()
	q := &query{b: cl.b}
	parts := set(q)
	parts = append(parts, col.Version+" = "+col.Version+" + 1")
	if col.UpdatedAt != "" {
		parts = append(parts, col.UpdatedAt+" = "+cl.b.Now())
	}
	where := col.ID + " = " + q.arg(t.ID) + " AND " + col.Owner + " = " + q.arg(t.Owner) + " AND " +
		col.Version + " = " + q.arg(t.Version) + " AND " + col.Status + " = " + q.arg(cl.c.t.Statuses.Claimed)
	var n int64
	err := cl.retrying(ctx, func() error {
		res, err := cl.exec(ctx, "UPDATE "+cl.c.t.Name+" SET "+join(parts)+" WHERE "+where, q.args...)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return cl.wrap(op, err)
	}
	if n == 0 {
		return cl.whyNot(ctx, op, t)
	}
	t.Version++
	return nil
}

// whyNot reads t's row to say why an owned update matched nothing.
func (cl *Claimer) whyNot(ctx context.Context, op string, t *Task) error {
	col := cl.c.c()
	q := &query{b: cl.b}
	text := cl.b.Select(Select{Columns: []string{col.Status, "COALESCE(" + col.Owner + ", '')", col.Version}, Table: cl.c.t.Name, Where: col.ID + " = " + q.arg(t.ID)})
	var status, ownerCol sql.NullString
	var version int64
	err := cl.db.QueryRowContext(ctx, text, q.args...).Scan(&status, &ownerCol, &version)
	owner := ownerCol.String
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("%s task %d: %w", op, t.ID, ErrNoTask)
	case err != nil:
		return fmt.Errorf("%s task %d: %w (and reading the row failed: %v)", op, t.ID, ErrNotClaimed, err)
	}
	now := "owned by " + owner
	if owner == "" {
		now = "unowned"
	}
	return fmt.Errorf("%s task %d by %s at version %d: %w; it is %s, %s, at version %d", op, t.ID, t.Owner, t.Version, ErrNotClaimed, status.String, now, version)
}
