package claimtable

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// NewTask is a row for Add.
type NewTask struct {
	Type     string
	Payload  []byte
	Priority int64
	// Delay puts the due time after the database's now (0: due at once).
	Delay time.Duration
	// MaxRetries is the failures allowed (0: Options.MaxRetries; use Add
	// with a negative value for none: it is stored as 0).
	MaxRetries int
}

// Add inserts tasks as ready rows, in statements of as many rows as the
// dialect's parameter limit allows, in one transaction.
func (cl *Claimer) Add(ctx context.Context, tasks ...NewTask) (err error) {
	if len(tasks) == 0 {
		return nil
	}
	col := cl.c.c()
	names := []string{col.Status, col.DueAt, col.Retries, col.Version}
	if col.Type != "" {
		names = append(names, col.Type)
	}
	if col.Payload != "" {
		names = append(names, col.Payload)
	}
	if col.Priority != "" {
		names = append(names, col.Priority)
	}
	if col.MaxRetries != "" {
		names = append(names, col.MaxRetries)
	}
	if col.UpdatedAt != "" {
		names = append(names, col.UpdatedAt)
	}
	row := func(q *query, t NewTask) string {
		now := cl.b.Now()
		vals := []string{q.arg(cl.c.t.Statuses.Ready), cl.b.PlusMs(now, q.arg(t.Delay.Milliseconds())), "0", "0"}
		if col.Type != "" {
			vals = append(vals, q.arg(t.Type))
		}
		if col.Payload != "" {
			p := t.Payload
			if p == nil {
				p = []byte{}
			}
			vals = append(vals, q.arg(p))
		}
		if col.Priority != "" {
			vals = append(vals, q.arg(t.Priority))
		}
		if col.MaxRetries != "" {
			m := t.MaxRetries
			switch {
			case m == 0:
				m = cl.opts.MaxRetries
			case m < 0:
				m = 0
			}
			vals = append(vals, q.arg(int64(m)))
		}
		if col.UpdatedAt != "" {
			vals = append(vals, now)
		}
		return "(" + strings.Join(vals, ", ") + ")"
	}
	for _, t := range tasks {
		if t.Delay < 0 {
			return fmt.Errorf("%w: task delay must not be negative, got %s", dialects.ErrInvalid, t.Delay)
		}
	}
	tx, err := cl.db.BeginTx(ctx, nil)
	if err != nil {
		return cl.wrap("add", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	head := "INSERT INTO " + cl.c.t.Name + " (" + strings.Join(names, ", ") + ") VALUES "
	perRow := 2 // status, delay; then one per optional column bound
	for _, c := range []string{col.Type, col.Payload, col.Priority, col.MaxRetries} {
		if c != "" {
			perRow++
		}
	}
	per := 1
	if cl.b.MultiRowInsert() {
		per = min(500, perStatement(cl.b, perRow))
	}
	for i := 0; i < len(tasks); i += per {
		j := min(i+per, len(tasks))
		q := &query{b: cl.b}
		rows := make([]string, 0, j-i)
		for _, t := range tasks[i:j] {
			rows = append(rows, row(q, t))
		}
		if _, err = tx.ExecContext(ctx, head+strings.Join(rows, ", "), q.args...); err != nil {
			return cl.wrap("add", err)
		}
	}
	if err = tx.Commit(); err != nil {
		return cl.wrap("add", err)
	}
	return nil
}

// CreateTable creates the default task table and its claim index when
// they do not exist. It refuses a mapped table (Columns other than the
// defaults): a user's own table is theirs to create.
func (cl *Claimer) CreateTable(ctx context.Context) error {
	if cl.c.t.Columns != DefaultColumns() {
		return fmt.Errorf("%w: table %s has a column mapping of its own; only the default task table is created", dialects.ErrInvalid, cl.c.t.Name)
	}
	for _, stmt := range cl.b.Create(cl.c.t) {
		if _, err := cl.db.ExecContext(ctx, stmt); err != nil && !cl.b.IsExists(err) {
			return dialects.Wrap(cl.b.Dialect(), "create task table", err)
		}
	}
	return nil
}

// ColumnReader reads a table's column names (sqlkit.DB.TableColumns).
type ColumnReader func(ctx context.Context, table string) ([]string, error)

// CheckColumns reads the task table's columns with read and fails, in one
// message naming them, when mapped columns are missing (ErrInvalid), or
// with dialects.ErrNoTable when the table is missing.
func (cl *Claimer) CheckColumns(ctx context.Context, read ColumnReader) error {
	have, err := read(ctx, cl.c.t.Name)
	if err != nil {
		return err
	}
	if missing := cl.c.t.MissingColumns(have); len(missing) > 0 {
		return fmt.Errorf("%w: task table %s lacks the mapped columns %s: add them, or map the roles to columns it has", dialects.ErrInvalid, cl.c.t.Name, strings.Join(missing, ", "))
	}
	return nil
}

// DropTable drops the task table, and what the dialect made with it (a
// Dropper's statements); selfcheck and tests drop the tables they made,
// nothing else calls it.
func (cl *Claimer) DropTable(ctx context.Context) error {
	stmts := []string{"DROP TABLE " + cl.c.t.Name}
	if d, ok := cl.b.(Dropper); ok {
		stmts = d.Drop(cl.c.t)
	}
	for _, stmt := range stmts {
		if _, err := cl.db.ExecContext(ctx, stmt); err != nil {
			return dialects.Wrap(cl.b.Dialect(), "drop task table", err)
		}
	}
	return nil
}
