package claimtable

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/schedlock/schedlock/dialects"
)

// Outcome is what FinishMany makes of one claimed row.
type Outcome uint8

// The outcomes of FinishMany, each what the single call of its name does.
const (
	// Completed marks the row done, as Complete does.
	Completed Outcome = iota + 1
	// Failed counts a failure, as Fail does: ready again after the
	// back-off while the retries last, else failed for good.
	Failed
	// GivenBack returns the row to the ready rows, as GiveBack does.
	GivenBack
)

func (o Outcome) String() string {
	switch o {
	case Completed:
		return "complete"
	case Failed:
		return "fail"
	case GivenBack:
		return "give back"
	}
	return fmt.Sprintf("outcome(%d)", uint8(o))
}

// Finished is one claimed task of a FinishMany and what becomes of it.
type Finished struct {
	Task    *Task
	Outcome Outcome
}

// FinishRow is one row of a batch finish: the task's id and version, its
// outcome, and for Failed the back-off before it is due again.
type FinishRow struct {
	ID, Version int64
	Outcome     Outcome
	BackoffMs   int64
}

// Finish is the parts of one batch-finish statement a Builder writes
// (FinishSQL): every row of Rows is changed only where Owner holds it at
// its Version with the claimed status — checked per row in the statement,
// so a row another worker took over stays as it is — and the statement
// tells which rows it changed (FinishStatement.Report). The values are
// bound through Arg, in the order the placeholders appear in the text.
type Finish struct {
	Table    string
	Columns  Columns
	Statuses Statuses
	Owner    string
	Rows     []FinishRow
	// MaxRetries is the failures allowed where the table has no
	// max_retries column.
	MaxRetries int64
	// MaskBase is the value a ReportMask statement adds its bits to: a
	// random multiple of 2^32 at or above 2^62, unlike any id a previous
	// statement of the connection can have left behind.
	MaskBase int64
	q        *query
}

// Arg binds v to the next placeholder and returns that placeholder.
func (f *Finish) Arg(v any) string { return f.q.arg(v) }

// TakeArgs returns the values bound so far and starts a new statement:
// the next Arg is the first placeholder again. A ReportLocked builder
// writes its Lock first and takes its values with TakeArgs.
func (f *Finish) TakeArgs() []any {
	args := f.q.args
	f.q.args = nil
	return args
}

// IDs are the ids of the rows with outcome o, in row order.
func (f *Finish) IDs(o Outcome) []int64 {
	var ids []int64
	for _, r := range f.Rows {
		if r.Outcome == o {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// In is "col IN (p, …)" binding ids, "" for none.
func (f *Finish) In(col string, ids []int64) string {
	if len(ids) == 0 {
		return ""
	}
	ps := make([]string, len(ids))
	for i, id := range ids {
		ps[i] = f.Arg(id)
	}
	return col + " IN (" + strings.Join(ps, ", ") + ")"
}

// Backoff is the failed rows that wait the same back-off.
type Backoff struct {
	Ms  int64
	IDs []int64
}

// Backoffs groups the Failed rows by their back-off, in first-seen order.
func (f *Finish) Backoffs() []Backoff {
	var out []Backoff
	at := map[int64]int{}
	for _, r := range f.Rows {
		if r.Outcome != Failed {
			continue
		}
		i, ok := at[r.BackoffMs]
		if !ok {
			i = len(out)
			at[r.BackoffMs] = i
			out = append(out, Backoff{Ms: r.BackoffMs})
		}
		out[i].IDs = append(out[i].IDs, r.ID)
	}
	return out
}

// MaxRetriesExpr is the max_retries column, or the bound default where
// the table has none.
func (f *Finish) MaxRetriesExpr() string {
	if f.Columns.MaxRetries != "" {
		return f.Columns.MaxRetries
	}
	return f.Arg(f.MaxRetries)
}

// FinishReport is how a batch-finish statement tells the rows it changed.
type FinishReport uint8

const (
	// ReportRows: the statement returns one row per changed row, its id
	// (UPDATE … RETURNING, OUTPUT inserted.id).
	ReportRows FinishReport = iota + 1
	// ReportMask: the statement's last insert id (MySQL's
	// LAST_INSERT_ID(expr), in the OK packet) is MaskBase plus 2^i for
	// each changed row i of Rows; a statement that changed no row leaves
	// some other value there.
	ReportMask
	// ReportLocked: the database cannot tell in one statement; Lock
	// selects (and locks, in a transaction) the ids of the rows still the
	// owner's, with the same per-row checks, and Text then updates them
	// before the commit.
	ReportLocked
)

// FinishStatement is a batch finish as a Builder writes it.
type FinishStatement struct {
	Text   string
	Report FinishReport
	// Lock is the locking select of ReportLocked, bound to LockArgs.
	Lock     string
	LockArgs []any
}

// Finisher is the batch finish of a Builder. Every SQL dialect has one.
type Finisher interface {
	// FinishSQL writes the statement of f.
	FinishSQL(f *Finish) FinishStatement
	// FinishRows is the most rows one finish statement takes.
	FinishRows() int
}

// FinishMany completes, fails and gives back many claimed tasks of one
// owner at once, each as Complete, Fail or GiveBack would, in one
// statement per Builder.FinishRows rows (a short transaction where the
// database cannot report the rows it changed in one statement: Oracle,
// Dameng). Each row is owner- and version-checked on its own: a row its
// owner no longer holds is left unchanged and its index in items is
// returned in notClaimed (in order); the others' tasks move their Version
// on. Every task must have the same owner, and a row may appear once;
// otherwise nothing is sent and the error matches ErrInvalid. An error
// from the database leaves the rows of the statements not yet sent
// unchanged and reports nothing for them.
func (cl *Claimer) FinishMany(ctx context.Context, items []Finished) (notClaimed []int, err error) {
	if len(items) == 0 {
		return nil, nil
	}
	if len(items) > MaxBatch {
		return nil, fmt.Errorf("%w: %d tasks to finish is above the limit of %d: finish in several batches", dialects.ErrInvalid, len(items), MaxBatch)
	}
	fin, ok := cl.b.(Finisher)
	if !ok {
		return nil, dialects.Wrap(cl.b.Dialect(), "finish", fmt.Errorf("%w: the dialect has no batch finish", dialects.ErrUnsupported))
	}
	owner := ""
	seen := make(map[int64]bool, len(items))
	rows := make([]FinishRow, len(items))
	for i, it := range items {
		switch {
		case it.Task == nil:
			return nil, fmt.Errorf("%w: finish of a nil task (item %d)", dialects.ErrInvalid, i)
		case it.Outcome < Completed || it.Outcome > GivenBack:
			return nil, fmt.Errorf("%w: task %d: unknown outcome %d", dialects.ErrInvalid, it.Task.ID, it.Outcome)
		case seen[it.Task.ID]:
			return nil, fmt.Errorf("%w: task %d appears twice in one finish", dialects.ErrInvalid, it.Task.ID)
		}
		if i == 0 {
			owner = it.Task.Owner
			if err := dialects.CheckOwner(owner); err != nil {
				return nil, err
			}
		} else if it.Task.Owner != owner {
			return nil, fmt.Errorf("%w: one finish takes the tasks of one owner: task %d is %s's, task %d is %s's", dialects.ErrInvalid, items[0].Task.ID, owner, it.Task.ID, it.Task.Owner)
		}
		seen[it.Task.ID] = true
		rows[i] = FinishRow{ID: it.Task.ID, Version: it.Task.Version, Outcome: it.Outcome}
		if it.Outcome == Failed {
			rows[i].BackoffMs = cl.opts.Backoff(it.Task.Retries + 1).Milliseconds()
		}
	}
	per := max(1, fin.FinishRows())
	for from := 0; from < len(rows); from += per {
		to := min(from+per, len(rows))
		changed, err := cl.finishChunk(ctx, fin, owner, rows[from:to])
		if err != nil {
			return nil, cl.wrap("finish", err)
		}
		for i := from; i < to; i++ {
			if changed[rows[i].ID] {
				items[i].Task.Version++
			} else {
				notClaimed = append(notClaimed, i)
			}
		}
	}
	return notClaimed, nil
}

// finishChunk sends one finish statement and returns the ids it changed.
func (cl *Claimer) finishChunk(ctx context.Context, fin Finisher, owner string, rows []FinishRow) (map[int64]bool, error) {
	f := &Finish{Table: cl.c.t.Name, Columns: cl.c.c(), Statuses: cl.c.t.Statuses, Owner: owner, Rows: rows,
		MaxRetries: int64(cl.opts.MaxRetries), MaskBase: maskBase(), q: &query{b: cl.b}}
	st := fin.FinishSQL(f)
	args := f.q.args
	changed := make(map[int64]bool, len(rows))
	err := cl.retrying(ctx, func() error {
		clear(changed)
		switch st.Report {
		case ReportRows:
			return cl.finishReturning(ctx, st.Text, args, changed)
		case ReportMask:
			res, err := cl.exec(ctx, st.Text, args...)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil || n == 0 {
				return err
			}
			mask, err := res.LastInsertId()
			if err != nil {
				return err
			}
			bits := uint64(mask) - uint64(f.MaskBase)
			if mask < f.MaskBase || bits >= 1<<32 {
				return fmt.Errorf("the finish changed %d rows but reported %#x, not the rows' mask above %#x", n, mask, f.MaskBase)
			}
			for i, r := range rows {
				if bits&(1<<i) != 0 {
					changed[r.ID] = true
				}
			}
			if int64(len(changed)) != n {
				return fmt.Errorf("the finish changed %d rows but its mask names %d", n, len(changed))
			}
			return nil
		case ReportLocked:
			return cl.finishLocked(ctx, st, args, changed)
		}
		return fmt.Errorf("the %s dialect writes a finish of unknown report %d", cl.b.Dialect(), st.Report)
	})
	return changed, err
}

// finishReturning runs a finish that returns the changed ids.
func (cl *Claimer) finishReturning(ctx context.Context, text string, args []any, changed map[int64]bool) error {
	var q queryer = cl.db
	if cl.preparesWrites() {
		q = cl.statement(ctx, text)
	}
	rs, err := q.QueryContext(ctx, text, args...)
	if err != nil {
		return err
	}
	defer rs.Close()
	for rs.Next() {
		var id int64
		if err := rs.Scan(&id); err != nil {
			return err
		}
		changed[id] = true
	}
	if err := rs.Err(); err != nil {
		return err
	}
	return rs.Close()
}

// finishLocked runs a ReportLocked finish: lock the rows still the
// owner's, update them, commit; the locked rows are the changed ones.
func (cl *Claimer) finishLocked(ctx context.Context, st FinishStatement, args []any, changed map[int64]bool) (err error) {
	tx, err := cl.db.BeginTx(ctx, cl.b.TxOptions())
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	rs, err := tx.QueryContext(ctx, st.Lock, st.LockArgs...)
	if err != nil {
		return err
	}
	for rs.Next() {
		var id int64
		if err := rs.Scan(&id); err != nil {
			rs.Close()
			return err
		}
		changed[id] = true
	}
	if err := rs.Close(); err != nil {
		return err
	}
	if len(changed) == 0 {
		return tx.Commit()
	}
	res, err := tx.ExecContext(ctx, st.Text, args...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err == nil && n != int64(len(changed)) {
		return fmt.Errorf("the finish locked %d rows still the owner's but changed %d", len(changed), n)
	}
	return tx.Commit()
}

// maskBase is a random multiple of 2^32 in [2^62, 2^63).
func maskBase() int64 {
	var b [4]byte
	_, _ = rand.Read(b[:])
	tag := int64(binary.BigEndian.Uint32(b[:])>>2) | 1<<30
	return tag << 32
}

// Outcomes is the SET assignments of a batch finish that give each row
// its outcome, each followed by ",\n  ": the status (done; ready again,
// or failed once its retries are spent; ready for a row given back), the
// owner (kept by a done row and by a row failed for good, cleared
// otherwise) and, where a row failed, the due time: its back-off from the
// database's now, dueIn(ms) for a bound ms. Every right-hand side reads
// the row as it was; the failure count is RetriesSet's.
func (f *Finish) Outcomes(dueIn func(ms string) string) string {
	c, s := f.Columns, f.Statuses
	done, back := f.IDs(Completed), f.IDs(GivenBack)
	var w strings.Builder
	if len(done) == len(f.Rows) {
		// Every row completes: done, the owner kept.
		w.WriteString(c.Status + " = " + f.Arg(s.Done) + ",\n  ")
	} else {
		w.WriteString(c.Status + " = CASE")
		if len(done) > 0 {
			w.WriteString(" WHEN " + f.In(c.ID, done) + " THEN " + f.Arg(s.Done))
		}
		if len(back) > 0 {
			w.WriteString(" WHEN " + f.In(c.ID, back) + " THEN " + f.Arg(s.Ready))
		}
		w.WriteString(" WHEN " + c.Retries + " + 1 > " + f.MaxRetriesExpr() + " THEN " + f.Arg(s.Failed) + " ELSE " + f.Arg(s.Ready) + " END,\n  ")
		w.WriteString(c.Owner + " = CASE")
		if len(done) > 0 {
			w.WriteString(" WHEN " + f.In(c.ID, done) + " THEN " + c.Owner)
		}
		if len(back) > 0 {
			w.WriteString(" WHEN " + f.In(c.ID, back) + " THEN NULL")
		}
		w.WriteString(" WHEN " + c.Retries + " + 1 > " + f.MaxRetriesExpr() + " THEN " + c.Owner + " ELSE NULL END,\n  ")
	}
	if backoffs := f.Backoffs(); len(backoffs) > 0 {
		w.WriteString(c.DueAt + " = CASE WHEN " + c.Retries + " + 1 > " + f.MaxRetriesExpr() + " THEN " + c.DueAt)
		for _, g := range backoffs {
			w.WriteString(" WHEN " + f.In(c.ID, g.IDs) + " THEN " + dueIn(f.Arg(g.Ms)))
		}
		w.WriteString(" ELSE " + c.DueAt + " END,\n  ")
	}
	return w.String()
}

// RetriesSet is the assignment that counts a failure on the failed rows,
// "" when no row failed. Where SET assignments see the ones before them
// (MySQL), it must come after every assignment that reads the count.
func (f *Finish) RetriesSet() string {
	failed := f.IDs(Failed)
	if len(failed) == 0 {
		return ""
	}
	c := f.Columns
	return c.Retries + " = CASE WHEN " + f.In(c.ID, failed) + " THEN " + c.Retries + " + 1 ELSE " + c.Retries + " END"
}

// Held is the WHERE condition of a batch finish: the rows the owner still
// holds with the claimed status, each at its own version.
func (f *Finish) Held() string {
	c := f.Columns
	var w strings.Builder
	w.WriteString(c.Owner + " = " + f.Arg(f.Owner) + " AND " + c.Status + " = " + f.Arg(f.Statuses.Claimed) + " AND (")
	for i, r := range f.Rows {
		if i > 0 {
			w.WriteString(" OR ")
		}
		w.WriteString("(" + c.ID + " = " + f.Arg(r.ID) + " AND " + c.Version + " = " + f.Arg(r.Version) + ")")
	}
	return w.String() + ")"
}
