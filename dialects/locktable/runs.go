package locktable

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// ParamKind is the type of a bound value, for dialects whose placeholders
// carry a cast (PostgreSQL's $1::text).
type ParamKind int

const (
	// ParamText is a string.
	ParamText ParamKind = iota
	// ParamInt is an int64.
	ParamInt
)

// RunsSQL is what a dialect tells the engine to write the SQL of a run
// table (see dialects.RunHistory): the pieces differ, the statements are
// the same. Every statement runs alone in autocommit mode.
type RunsSQL struct {
	// Param is the placeholder of the i-th bound value (from 1, in the
	// order the values are bound): "$1::text", "?", ":1", "@p1".
	Param func(i int, kind ParamKind) string
	// Now is the database clock, UTC, millisecond precision, as the time
	// type stores it.
	Now string
	// PlusMs is ts plus ms milliseconds (ms an integer expression, maybe
	// negative).
	PlusMs func(ts, ms string) string
	// EpochMs renders a time column as integer milliseconds since the Unix
	// epoch.
	EpochMs func(expr string) string
	// Limit is "SELECT selectList rest" keeping the first n rows (rest
	// ends with ORDER BY).
	Limit func(selectList, rest, n string) string
	// Types of the columns.
	NameType, TextType, TimeType, BigIntType, IntType string
	// CreateIfMissing turns a plain CREATE TABLE into one that succeeds
	// when the table exists (IF NOT EXISTS, OBJECT_ID, a PL/SQL block);
	// nil sends the plain statement and takes "the table is there" as
	// success.
	CreateIfMissing func(table, create string) string
}

// RunsBuilder is implemented by Builders whose dialect has a run table.
type RunsBuilder interface {
	RunsSQL() RunsSQL
}

// Run-table columns.
const (
	runName     = "name"
	runToken    = "token"
	runHost     = "hostname"
	runOwner    = "locked_by"
	runStarted  = "started_at"
	runEnded    = "ended_at"
	runDuration = "duration_ms"
	runAtMost   = "at_most_ms"
	runExitCode = "exit_code"
	// runSchedule is the job's schedule (run --schedule), NULL when none.
	// Run tables created before it lack it: CreateTable adds it, and the
	// engine reads and writes such a table without it until then.
	runSchedule = "schedule_spec"
)

// params numbers placeholders in the order they are written.
type params struct {
	sql RunsSQL
	n   int
}

func (p *params) next(kind ParamKind) string {
	p.n++
	return p.sql.Param(p.n, kind)
}

// RunStatements are the run table's statements, by name: create, clear
// (rows of a recreated lock row), insert, insert_next (a run without a
// fencing token, given the next token of its name), prune, list, last (the
// newest run of every name), last-success (the newest run of every name
// that exited 0) and add-schedule (the schedule column for a table created
// without it). With schedule false they are those of a run table that
// lacks the schedule column: they neither write nor read it (NULL).
func RunStatements(r RunsSQL, table string, nameChars int, schedule bool) map[string]string {
	return map[string]string{
		"create":       runsCreate(r, table, nameChars),
		"clear":        runsClear(r, table),
		"insert":       runsInsert(r, table, schedule),
		"insert_next":  runsInsertNext(r, table, schedule),
		"prune":        runsPrune(r, table),
		"list":         runsList(r, table, schedule),
		"last":         runsLast(r, table, schedule, false),
		"last-success": runsLast(r, table, schedule, true),
		"add-schedule": "ALTER TABLE " + table + " ADD " + runSchedule + " " + r.TextType,
	}
}

func runsCreate(r RunsSQL, table string, nameChars int) string {
	nameType := strings.ReplaceAll(r.NameType, "%d", fmt.Sprint(nameChars))
	cols := []string{
		runName + " " + nameType + " NOT NULL",
		runToken + " " + r.BigIntType + " NOT NULL",
		runHost + " " + r.TextType + " NOT NULL",
		runOwner + " " + r.TextType + " NOT NULL",
		runStarted + " " + r.TimeType + " NOT NULL",
		runEnded + " " + r.TimeType + " NOT NULL",
		runDuration + " " + r.BigIntType + " NOT NULL",
		runAtMost + " " + r.BigIntType + " NOT NULL",
		runExitCode + " " + r.IntType + " NOT NULL",
		runSchedule + " " + r.TextType,
		"PRIMARY KEY (" + runName + ", " + runToken + ")",
	}
	create := "CREATE TABLE " + table + " (\n  " + strings.Join(cols, ",\n  ") + "\n)"
	if r.CreateIfMissing != nil {
		return r.CreateIfMissing(table, create)
	}
	return create
}

// runsClear removes the rows of a name at or above a token: runs recorded
// before the lock row was recreated and its tokens started again.
func runsClear(r RunsSQL, table string) string {
	p := &params{sql: r}
	return "DELETE FROM " + table + " WHERE " + runName + " = " + p.next(ParamText) + " AND " + runToken + " >= " + p.next(ParamInt)
}

func runsInsert(r RunsSQL, table string, schedule bool) string {
	p := &params{sql: r}
	cols := []string{runName, runToken, runHost, runOwner, runStarted, runEnded, runDuration, runAtMost, runExitCode}
	name, token, host, owner := p.next(ParamText), p.next(ParamInt), p.next(ParamText), p.next(ParamText)
	back := p.next(ParamInt)
	vals := []string{name, token, host, owner, r.PlusMs(r.Now, back), r.Now, p.next(ParamInt), p.next(ParamInt), p.next(ParamInt)}
	if schedule {
		// NULLIF: no schedule is NULL, also where '' is not NULL already.
		cols, vals = append(cols, runSchedule), append(vals, "NULLIF("+p.next(ParamText)+", '')")
	}
	return "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ")\nVALUES (" + strings.Join(vals, ", ") + ")"
}

// runsInsertNext records a run that has no fencing token of its own (a
// ShedLock or sys_sched_lock row, a session lock) under the next token of
// its name: one above the highest recorded, 1 for the first. The values
// are bound as in insert without the token, then the name again.
func runsInsertNext(r RunsSQL, table string, schedule bool) string {
	p := &params{sql: r}
	cols := []string{runName, runToken, runHost, runOwner, runStarted, runEnded, runDuration, runAtMost, runExitCode}
	name, host, owner := p.next(ParamText), p.next(ParamText), p.next(ParamText)
	back := p.next(ParamInt)
	vals := []string{name, "COALESCE(MAX(" + runToken + "), 0) + 1", host, owner, r.PlusMs(r.Now, back), r.Now, p.next(ParamInt), p.next(ParamInt), p.next(ParamInt)}
	if schedule {
		cols, vals = append(cols, runSchedule), append(vals, "NULLIF("+p.next(ParamText)+", '')")
	}
	return "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ")\nSELECT " + strings.Join(vals, ", ") + "\nFROM " + table + " WHERE " + runName + " = " + p.next(ParamText)
}

// runsPrune deletes the rows of a name older than its keep newest: those
// below the smallest token among the newest keep.
func runsPrune(r RunsSQL, table string) string {
	p := &params{sql: r}
	name := p.next(ParamText)
	inner := r.Limit(runToken, "FROM "+table+" WHERE "+runName+" = "+p.next(ParamText)+" ORDER BY "+runToken+" DESC", p.next(ParamInt))
	return "DELETE FROM " + table + " WHERE " + runName + " = " + name + " AND " + runToken + " < (SELECT MIN(" + runToken + ") FROM (" + inner + ") k)"
}

// runColumns are the columns list and last read, times as epoch
// milliseconds; the schedule is NULL where the table has no column for
// it.
func runColumns(r RunsSQL, alias string, schedule bool) string {
	c := func(col string) string { return alias + "." + col }
	sched := "NULL"
	if schedule {
		sched = c(runSchedule)
	}
	return strings.Join([]string{c(runName), c(runToken), c(runHost), c(runOwner), r.EpochMs(c(runStarted)), r.EpochMs(c(runEnded)), c(runDuration), c(runAtMost), c(runExitCode), sched}, ", ")
}

func runsList(r RunsSQL, table string, schedule bool) string {
	p := &params{sql: r}
	return r.Limit(runColumns(r, "r", schedule), "FROM "+table+" r WHERE r."+runName+" = "+p.next(ParamText)+" ORDER BY r."+runToken+" DESC", p.next(ParamInt))
}

// runsLast selects the newest run of every name (the largest token), or
// with succeeded the newest that exited 0.
func runsLast(r RunsSQL, table string, schedule, succeeded bool) string {
	cond := ""
	if succeeded {
		cond = " AND m." + runExitCode + " = 0"
	}
	return "SELECT " + runColumns(r, "r", schedule) + " FROM " + table + " r\nWHERE r." + runToken + " = (SELECT MAX(m." + runToken + ") FROM " + table + " m WHERE m." + runName + " = r." + runName + cond + ")\nORDER BY r." + runName
}

// Runs is the run table beside a native lock table: a dialects.RunHistory.
type Runs struct {
	l     *Locker
	table string
	stmts map[string]string
	// legacy are the statements of a run table without the schedule
	// column; scheduled says which set the table takes, once its columns
	// were read (see shape).
	legacy    map[string]string
	mu        sync.Mutex
	scheduled *bool
}

var (
	_ dialects.RunHistorian = (*Locker)(nil)
	_ dialects.RunHistory   = (*Runs)(nil)
)

// RunHistory returns the run table of the lock table: for the native
// preset dialects.RunsTable(table), for the others schedlock's own,
// dialects.OwnRunsTable(table). A dialect whose Builder is no RunsBuilder
// gives an error matching dialects.ErrUnsupported.
func (l *Locker) RunHistory() (dialects.RunHistory, error) {
	rb, ok := l.b.(RunsBuilder)
	if !ok {
		return nil, dialects.Wrap(l.b.Dialect(), "run history", fmt.Errorf("%w: no run table for %s", dialects.ErrUnsupported, l.b.Dialect()))
	}
	table := dialects.RunsTable(l.schema.Table)
	if l.schema.Preset != dialects.PresetSchedlock {
		table = dialects.OwnRunsTable(l.schema.Table)
	}
	return &Runs{l: l, table: table, stmts: RunStatements(rb.RunsSQL(), table, l.maxRunes, true), legacy: RunStatements(rb.RunsSQL(), table, l.maxRunes, false)}, nil
}

// shape returns the statements the run table takes: with the schedule
// column, or the legacy ones of a table created before it. Whether the
// table has the column is read once, by selecting it (no row): a result
// set's columns would do, but a driver may keep a statement's description
// from before the table changed (pgx's cache). When the select fails and
// the table cannot be read either, the full set is taken, and its error
// says why; nothing is remembered then.
func (h *Runs) shape(ctx context.Context) (stmts map[string]string, scheduled bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.scheduled == nil {
		has, err := h.hasScheduleColumn(ctx)
		if err != nil {
			return h.stmts, true
		}
		h.scheduled = &has
	}
	if *h.scheduled {
		return h.stmts, true
	}
	return h.legacy, false
}

// Table is the run table's name.
func (h *Runs) Table() string { return h.table }

// CreateSQL is the statement CreateTable sends.
func (h *Runs) CreateSQL() string { return h.stmts["create"] }

// Statements are the run table's statements by name (see RunStatements).
func (h *Runs) Statements() map[string]string { return h.stmts }

// StoredName is name as the lock table stores it.
func (h *Runs) StoredName(name string) string { return h.l.StoredName(name) }

// hasScheduleColumn reports whether the run table has the schedule
// column: selecting it works, or fails naming the column (every database
// names an unknown column in its error: `column "schedule_spec" does not
// exist`, `Unknown column 'schedule_spec'`, `ORA-00904:
// "SCHEDULE_SPEC": invalid identifier`, …). Any other failure (a missing
// table, a lost connection) is returned.
func (h *Runs) hasScheduleColumn(ctx context.Context) (bool, error) {
	rows, err := h.l.db.QueryContext(ctx, "SELECT "+runSchedule+" FROM "+h.table+" WHERE 1 = 0")
	if err == nil {
		return true, rows.Close()
	}
	if strings.Contains(strings.ToLower(err.Error()), runSchedule) && !h.l.b.IsMissingTable(err) {
		return false, nil
	}
	return false, err
}

// CreateTable creates the run table unless it exists. Where the dialect
// has no conditional CREATE, a failed one is success when the table can be
// read. A table created without the schedule column gets it (ALTER TABLE
// … ADD, a NULL column: its rows stay as they are).
func (h *Runs) CreateTable(ctx context.Context) error {
	_, err := h.l.db.ExecContext(ctx, h.stmts["create"])
	if has, herr := h.hasScheduleColumn(ctx); herr == nil {
		err = nil // the table is there
		if !has {
			_, err = h.l.db.ExecContext(ctx, h.stmts["add-schedule"])
		}
	}
	h.mu.Lock()
	h.scheduled = nil // read the columns again
	h.mu.Unlock()
	return dialects.Wrap(h.l.b.Dialect(), "create run table", dialects.Classify(h.l.b, err))
}

// classify makes a missing run table a *dialects.MissingTableError.
func (h *Runs) classify(err error) error {
	if err != nil && h.l.b.IsMissingTable(err) {
		return &dialects.MissingTableError{Table: h.table, CreateSQL: h.CreateSQL(), Err: err}
	}
	return dialects.Classify(h.l.b, err)
}

// Record writes run and prunes its name to the newest keep runs: three
// statements (clear, insert, prune), each in autocommit mode; a run
// without a token two (insert_next, prune).
//
// On a run table created without the schedule column the run is
// recorded without its schedule, and when it has one the error is a
// *dialects.NoScheduleColumnError (CreateTable adds the column).
func (h *Runs) Record(ctx context.Context, run dialects.Run, keep int) error {
	if keep <= 0 {
		keep = dialects.DefaultKeepRuns
	}
	db := h.l.db
	stmts, scheduled := h.shape(ctx)
	type step struct {
		op   string
		args []any
	}
	insert := []any{run.Name, run.Token, run.Host, run.Owner, -run.Duration.Milliseconds(), run.Duration.Milliseconds(), run.AtMost.Milliseconds(), int64(run.ExitCode)}
	next := []any{run.Name, run.Host, run.Owner, -run.Duration.Milliseconds(), run.Duration.Milliseconds(), run.AtMost.Milliseconds(), int64(run.ExitCode)}
	if scheduled {
		insert, next = append(insert, run.Schedule), append(next, run.Schedule)
	}
	steps := []step{
		{"clear", []any{run.Name, run.Token}},
		{"insert", insert},
	}
	if run.Token <= 0 {
		steps = []step{{"insert_next", append(next, run.Name)}}
	}
	steps = append(steps, step{"prune", []any{run.Name, run.Name, int64(keep)}})
	for _, s := range steps {
		err := h.l.retrying(ctx, func() error {
			_, err := db.ExecContext(ctx, stmts[s.op], s.args...)
			return err
		})
		if err != nil {
			return dialects.Wrap(h.l.b.Dialect(), "record run", fmt.Errorf("%s: %w", s.op, h.classify(err)))
		}
	}
	if !scheduled && run.Schedule != "" {
		return dialects.Wrap(h.l.b.Dialect(), "record run", &dialects.NoScheduleColumnError{Table: h.table, AddSQL: stmts["add-schedule"]})
	}
	return nil
}

// Runs lists the newest runs of name, newest first.
func (h *Runs) Runs(ctx context.Context, name string, limit int) ([]dialects.Run, error) {
	if err := dialects.CheckName(name); err != nil {
		return nil, dialects.Wrap(h.l.b.Dialect(), "list runs", err)
	}
	if limit <= 0 {
		limit = dialects.DefaultKeepRuns
	}
	stmts, _ := h.shape(ctx)
	runs, err := h.query(ctx, stmts["list"], h.StoredName(name), int64(limit))
	return runs, dialects.Wrap(h.l.b.Dialect(), "list runs", err)
}

// LastRuns returns the newest run of every name, by stored name.
func (h *Runs) LastRuns(ctx context.Context) (map[string]dialects.Run, error) {
	return h.lastRuns(ctx, "last", "last runs")
}

// LastSuccesses returns the newest run of every name that exited 0, by
// stored name.
func (h *Runs) LastSuccesses(ctx context.Context) (map[string]dialects.Run, error) {
	return h.lastRuns(ctx, "last-success", "last successful runs")
}

func (h *Runs) lastRuns(ctx context.Context, op, what string) (map[string]dialects.Run, error) {
	stmts, _ := h.shape(ctx)
	runs, err := h.query(ctx, stmts[op])
	if err != nil {
		return nil, dialects.Wrap(h.l.b.Dialect(), what, err)
	}
	out := make(map[string]dialects.Run, len(runs))
	for _, r := range runs {
		out[r.Name] = r
	}
	return out, nil
}

func (h *Runs) query(ctx context.Context, query string, args ...any) ([]dialects.Run, error) {
	var rows *sql.Rows
	err := h.l.retrying(ctx, func() error {
		var err error
		rows, err = h.l.db.QueryContext(ctx, query, args...)
		return err
	})
	if err != nil {
		return nil, h.classify(err)
	}
	defer rows.Close()
	out := []dialects.Run{}
	for rows.Next() {
		var (
			name, host, owner sql.NullString
			token             sql.NullInt64
			started, ended    sql.NullInt64
			duration, atMost  sql.NullInt64
			exitCode          sql.NullInt64
			schedule          sql.NullString
		)
		if err := rows.Scan(&name, &token, &host, &owner, &started, &ended, &duration, &atMost, &exitCode, &schedule); err != nil {
			return nil, err
		}
		out = append(out, dialects.Run{
			Name: name.String, Token: token.Int64, Host: host.String, Owner: owner.String,
			StartedAt: msTime(started), EndedAt: msTime(ended),
			Duration: time.Duration(duration.Int64) * time.Millisecond, AtMost: time.Duration(atMost.Int64) * time.Millisecond,
			ExitCode: int(exitCode.Int64), Schedule: schedule.String,
		})
	}
	if err := rows.Err(); err != nil {
		return nil, h.classify(err)
	}
	return out, nil
}
