package sqlserver

import (
	"database/sql/driver"
	"fmt"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/leasesim"
	"github.com/schedlock/schedlock/internal/fakesql"
)

// simTable is a lock table the simulator created from the dialect's
// CREATE TABLE. Column roles are recognised by the preset column names;
// its rows are the shared lease model's (dialects/internal/leasesim),
// which runs the lease-table statements from their text.
type simTable struct {
	name                                     string
	nameCol, ownerCol, lockedAtCol, untilCol string
	tokenCol                                 string
	columns                                  []string
	nameUnits                                int  // nvarchar length of the name column
	nameBinary                               bool // the name column has a _BIN2 collation
	ownerBinary                              bool
	rows                                     map[string]*simRow // by compareKey of the name
}

// simRow is a lease row of the shared lease model.
type simRow = leasesim.Row

// compareKey is how SQL Server compares two nvarchar values: trailing
// spaces are ignored, and without a binary collation so is case.
func compareKey(s string, binary bool) string {
	s = strings.TrimRight(s, " ")
	if !binary {
		s = strings.ToLower(s)
	}
	return s
}

func invalidObject(table string) error {
	return simError(errInvalidObjectName, 16, "Invalid object name '%s'.", table)
}

// table returns the table called name, or error 208.
func (sim *simServer) table(name string) (*simTable, error) {
	t := sim.tables[strings.ToLower(name)]
	if t == nil {
		return nil, invalidObject(name)
	}
	return t, nil
}

var (
	createRE  = regexp.MustCompile(`^IF OBJECT_ID\(N'([^']+)', N'U'\) IS NULL\nCREATE TABLE (\S+) \(\n((?s).*)\n\)$`)
	columnRE  = regexp.MustCompile(`^(\w+) (n?varchar\((\d+)\)(?: COLLATE (\w+))?|datetime2\(3\)|bigint) NOT NULL(?: DEFAULT 0)?$`)
	primaryRE = regexp.MustCompile(`^PRIMARY KEY \((\w+)\)$`)
	dropRE    = regexp.MustCompile(`^IF OBJECT_ID\(N'([^']+)', N'U'\) IS NOT NULL\nDROP TABLE (\S+)$`)
)

func (sim *simServer) createTable(q string) (fakesql.Response, error) {
	m := createRE.FindStringSubmatch(q)
	if m == nil || m[1] != m[2] {
		return fakesql.Response{}, fmt.Errorf("simulator: unexpected CREATE TABLE %q", q)
	}
	t := &simTable{name: m[2], rows: map[string]*simRow{}}
	primary := ""
	for _, line := range strings.Split(m[3], ",\n") {
		line = strings.TrimSpace(line)
		if pm := primaryRE.FindStringSubmatch(line); pm != nil {
			primary = pm[1]
			continue
		}
		cm := columnRE.FindStringSubmatch(line)
		if cm == nil {
			return fakesql.Response{}, fmt.Errorf("simulator: unexpected column definition %q", line)
		}
		col := cm[1]
		t.columns = append(t.columns, col)
		binary := strings.HasSuffix(cm[4], "_BIN2")
		switch col {
		case "name", "lock_name":
			t.nameCol, t.nameBinary = col, binary
			t.nameUnits, _ = strconv.Atoi(cm[3])
		case "locked_by", "lock_owner":
			t.ownerCol, t.ownerBinary = col, binary
		case "locked_at", "acquire_time":
			t.lockedAtCol = col
		case "lock_until", "expire_time":
			t.untilCol = col
		case "token":
			t.tokenCol = col
		default:
			return fakesql.Response{}, fmt.Errorf("simulator: unknown column %q", col)
		}
	}
	if primary == "" || primary != t.nameCol || t.ownerCol == "" || t.lockedAtCol == "" || t.untilCol == "" || t.nameUnits == 0 {
		return fakesql.Response{}, fmt.Errorf("simulator: CREATE TABLE lacks a lock-table column or the primary key on the name: %q", q)
	}
	if t.nameBinary != t.ownerBinary {
		return fakesql.Response{}, fmt.Errorf("simulator: models one collation for the name and owner columns: %q", q)
	}
	sim.mu.Lock()
	defer sim.mu.Unlock()
	if _, exists := sim.tables[strings.ToLower(t.name)]; !exists {
		sim.tables[strings.ToLower(t.name)] = t
	}
	return fakesql.Response{}, nil
}

func (sim *simServer) dropTable(q string) (fakesql.Response, error) {
	if m := dropRE.FindStringSubmatch(q); m != nil && m[1] == m[2] {
		sim.mu.Lock()
		defer sim.mu.Unlock()
		delete(sim.tables, strings.ToLower(m[1]))
		return fakesql.Response{}, nil
	}
	return sim.probe(0, q)
}

func (sim *simServer) columns(table string) (fakesql.Response, error) {
	sim.mu.Lock()
	defer sim.mu.Unlock()
	if sim.liquibase != nil && strings.EqualFold(table, liquibaseTable) {
		return fakesql.Response{Columns: []string{"ID", "LOCKED", "LOCKGRANTED", "LOCKEDBY"}}, nil
	}
	t, err := sim.table(table)
	if err != nil {
		return fakesql.Response{}, err
	}
	return fakesql.Response{Columns: append([]string(nil), t.columns...)}, nil
}

func (sim *simServer) lockTables() (fakesql.Response, error) {
	sim.mu.Lock()
	defer sim.mu.Unlock()
	resp := fakesql.Response{Columns: []string{"name", "order"}}
	for _, t := range sim.tables {
		switch strings.ToLower(t.name) {
		case "schedlock", "shedlock", "sys_sched_lock", "databasechangeloglock":
			resp.Rows = append(resp.Rows, []any{t.name, int64(0)})
		}
	}
	if sim.liquibase != nil {
		resp.Rows = append(resp.Rows, []any{liquibaseTable, int64(0)})
	}
	sort.Slice(resp.Rows, func(i, j int) bool { return resp.Rows[i][0].(string) < resp.Rows[j][0].(string) })
	return resp, nil
}

func (t *simTable) noRow() fakesql.Response { return fakesql.Response{Columns: []string{""}} }

// lease is t as the shared lease model's table.
func (t *simTable) lease() *leasesim.Table {
	return &leasesim.Table{Schema: dialects.Schema{Table: t.name, NameCol: t.nameCol, OwnerCol: t.ownerCol,
		LockedAtCol: t.lockedAtCol, UntilCol: t.untilCol, TokenCol: t.tokenCol}, Rows: t.rows}
}

// env evaluates a statement on t as SQL Server would, with the values
// args bound to @p1, @p2, …: SYSUTCDATETIME() reads the database clock
// now, once for the whole statement; bigint / int divides as integers;
// strings compare as t's collation does (trailing spaces ignored, and
// case too without a binary collation).
func (t *simTable) env(now time.Time, args []driver.NamedValue) leasesim.Env {
	return leasesim.Env{
		Placeholder: leasesim.Bound(args),
		Func: func(name string, vals []any) (any, bool, error) {
			if name == "SYSUTCDATETIME" && len(vals) == 0 {
				return now, true, nil
			}
			return nil, false, nil
		},
		IntDiv: true,
		CompareStrings: func(a, b string) int {
			return strings.Compare(compareKey(a, t.nameBinary), compareKey(b, t.nameBinary))
		},
	}
}

// exec runs a lease-table write statement on the table it names, from its
// text; on success the caller holds sim.mu with the table and the result.
func (sim *simServer) exec(q string, args []driver.NamedValue) (*simTable, leasesim.Result, leasesim.Env, error) {
	name, err := leasesim.Target(q)
	if err != nil {
		return nil, leasesim.Result{}, leasesim.Env{}, fmt.Errorf("simulator: %w", err)
	}
	t, err := sim.table(name)
	if err != nil {
		return nil, leasesim.Result{}, leasesim.Env{}, err
	}
	env := t.env(sim.now(), args)
	res, err := t.lease().Exec(q, env)
	if err != nil {
		return nil, leasesim.Result{}, leasesim.Env{}, fmt.Errorf("simulator: %w", err)
	}
	return t, res, env, nil
}

// output is the statement's OUTPUT for the rows it changed.
func (t *simTable) output(res leasesim.Result, env leasesim.Env, rows ...*simRow) (fakesql.Response, error) {
	resp := t.noRow()
	for _, r := range rows {
		v, err := t.lease().Output(res, r, env)
		if err != nil {
			return fakesql.Response{}, fmt.Errorf("simulator: %w", err)
		}
		resp.Rows = append(resp.Rows, []any{v})
	}
	return resp, nil
}

// fits enforces the nvarchar length of the name column (error 2628 since
// SQL Server 2019; 8152 before).
func (t *simTable) fits(name string) error {
	if utf16Len(name) > t.nameUnits {
		return simError(2628, 16, "String or binary data would be truncated in table '%s', column '%s'. Truncated value: '%s'.", t.name, t.nameCol, name)
	}
	return nil
}

// acquire answers the MERGE, run from its text by the shared lease
// model: a row its WHEN MATCHED condition holds for is taken over, a new
// name is inserted. Without WITH (HOLDLOCK) it does what SQL Server does
// under READ COMMITTED: it looks for the row, lets other sessions run, and
// inserts, so two sessions may both insert and one gets error 2627.
func (sim *simServer) acquire(q string, args []driver.NamedValue) (fakesql.Response, error) {
	into, _ := leasesim.Clause(q, "MERGE INTO", "USING")
	holdLock := strings.Contains(into, " WITH (HOLDLOCK) ")
	sim.mu.Lock()
	t, res, env, err := sim.exec(q, args)
	if err != nil {
		sim.mu.Unlock()
		return fakesql.Response{}, err
	}
	if res.Insert == nil {
		defer sim.mu.Unlock()
		return t.output(res, env, res.Rows...)
	}
	row := res.Insert
	if err := t.fits(row.Name); err != nil {
		sim.mu.Unlock()
		return fakesql.Response{}, err
	}
	if !holdLock {
		sim.mu.Unlock()
		// A window wide enough that racers meet even on a busy
		// machine (a new name per round: one wait per round).
		runtime.Gosched()
		time.Sleep(5 * time.Millisecond)
		sim.mu.Lock()
	}
	defer sim.mu.Unlock()
	key := compareKey(row.Name, t.nameBinary)
	if sim.dupKeyOnInsert != 0 && t.rows[key] == nil {
		now := sim.now()
		t.rows[key] = &simRow{Name: row.Name, Owner: "other-writer", LockedAt: now, Until: now.Add(time.Minute), Token: 1}
	}
	if t.rows[key] != nil {
		number := sim.dupKeyOnInsert
		if number == 0 {
			number = errDuplicateKey
		}
		if number == errDuplicateIndexKey {
			return fakesql.Response{}, simError(number, 14, "Cannot insert duplicate key row in object 'dbo.%s' with unique index 'ux_%s'. The duplicate key value is (%s).", t.name, t.nameCol, row.Name)
		}
		return fakesql.Response{}, simError(number, 14, "Violation of PRIMARY KEY constraint 'PK__%s'. Cannot insert duplicate key in object 'dbo.%s'. The duplicate key value is (%s).", t.name, t.name, row.Name)
	}
	t.rows[key] = row
	return t.output(res, env, row)
}

// write answers Refresh, Release and Expire (UPDATE … OUTPUT) and
// ReleaseDelete, Sweep and Delete (DELETE … OUTPUT), run from their text
// by the shared lease model: the OUTPUT row of every row they changed.
func (sim *simServer) write(q string, args []driver.NamedValue) (fakesql.Response, error) {
	sim.mu.Lock()
	defer sim.mu.Unlock()
	t, res, env, err := sim.exec(q, args)
	if err != nil {
		return fakesql.Response{}, err
	}
	return t.output(res, env, res.Rows...)
}

// selectRows answers Inspect (one name) and List (every row, by name).
func (sim *simServer) selectRows(q string, args []driver.NamedValue) (fakesql.Response, error) {
	fromAt := strings.Index(q, "\nFROM ")
	if fromAt < 0 {
		return fakesql.Response{}, fmt.Errorf("simulator: unexpected SELECT %q", q)
	}
	table, _, _ := strings.Cut(q[fromAt+len("\nFROM "):], " ")
	sim.mu.Lock()
	defer sim.mu.Unlock()
	t, err := sim.table(table)
	if err != nil {
		return fakesql.Response{}, err
	}
	now := sim.now().UnixMilli()
	shape := func(r *simRow) []any {
		token := int64(0)
		if t.tokenCol != "" {
			token = r.Token
		}
		return []any{r.Owner, token, r.LockedAt.UnixMilli(), r.Until.UnixMilli(), now}
	}
	cols := []string{t.ownerCol, "token", "locked_at_ms", "until_ms", "now_ms"}
	if strings.HasSuffix(q, "\nORDER BY t."+t.nameCol+";") {
		resp := fakesql.Response{Columns: append([]string{t.nameCol}, cols...)}
		var rows []*simRow
		for _, r := range t.rows {
			rows = append(rows, r)
		}
		sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
		for _, r := range rows {
			resp.Rows = append(resp.Rows, append([]any{r.Name}, shape(r)...))
		}
		return resp, nil
	}
	if !strings.HasSuffix(q, "\nWHERE t."+t.nameCol+" = @p1;") {
		return fakesql.Response{}, fmt.Errorf("simulator: unexpected SELECT %q", q)
	}
	name, err := stringArg(args, 1)
	if err != nil {
		return fakesql.Response{}, err
	}
	resp := fakesql.Response{Columns: cols}
	if r := t.rows[compareKey(name, t.nameBinary)]; r != nil {
		resp.Rows = [][]any{shape(r)}
	}
	return resp, nil
}

// probeTable is a table of the READPAST / NOWAIT probe: one row, locked
// by at most one session's transaction.
type probeTable struct {
	hasRow   bool
	lockedBy int64 // session holding the row's U lock in its transaction; 0 none
}

var probeSelectRE = regexp.MustCompile(`^SELECT id FROM (schedlock_probe_\w+) WITH \(([A-Z, ]+)\) WHERE id = 1$`)

// probe answers the statements of sqlkit.ProbeRowLocks: row locks taken
// with UPDLOCK inside a transaction, skipped by READPAST (refused under
// READ_COMMITTED_SNAPSHOT unless READCOMMITTEDLOCK is given, as the
// reference has it), refused at once by NOWAIT with error 1222.
func (sim *simServer) probe(id int64, q string) (fakesql.Response, error) {
	sim.mu.Lock()
	defer sim.mu.Unlock()
	sess := sim.sessions[id]
	switch {
	case q == "BEGIN TRANSACTION":
		sess.inTran = true
		return fakesql.Response{}, nil
	case q == "ROLLBACK":
		sess.inTran = false
		for _, p := range sim.probes {
			if p.lockedBy == id {
				p.lockedBy = 0
			}
		}
		return fakesql.Response{}, nil
	case probeCreateRE.MatchString(q):
		sim.probes[probeCreateRE.FindStringSubmatch(q)[1]] = &probeTable{}
		return fakesql.Response{}, nil
	case strings.HasPrefix(q, "INSERT INTO schedlock_probe_"):
		name, _, _ := strings.Cut(strings.TrimPrefix(q, "INSERT INTO "), " ")
		if p := sim.probes[name]; p != nil {
			p.hasRow = true
			return fakesql.Response{RowsAffected: 1}, nil
		}
		return fakesql.Response{}, invalidObject(name)
	case strings.Contains(q, "DROP TABLE schedlock_probe_"):
		delete(sim.probes, q[strings.LastIndex(q, " ")+1:])
		return fakesql.Response{}, nil
	}
	m := probeSelectRE.FindStringSubmatch(q)
	if m == nil {
		return fakesql.Response{}, fmt.Errorf("simulator: unexpected statement %q", q)
	}
	p := sim.probes[m[1]]
	if p == nil {
		return fakesql.Response{}, invalidObject(m[1])
	}
	hints := map[string]bool{}
	for _, h := range strings.Split(m[2], ", ") {
		hints[h] = true
	}
	row := fakesql.Response{Columns: []string{"id"}, Rows: [][]any{{int64(1)}}}
	lockedByOther := p.lockedBy != 0 && p.lockedBy != id
	switch {
	case hints["READPAST"]:
		if sim.rcsi && !hints["READCOMMITTEDLOCK"] {
			return fakesql.Response{}, simError(errReadPastIsolation, 16, "You can only specify the READPAST lock in the READ COMMITTED or REPEATABLE READ isolation levels.")
		}
		if lockedByOther {
			return fakesql.Response{Columns: []string{"id"}}, nil
		}
		return row, nil
	case lockedByOther && hints["NOWAIT"]:
		return fakesql.Response{}, simError(errLockTimeout, 16, "Lock request time out period exceeded.")
	case lockedByOther:
		return fakesql.Response{}, fmt.Errorf("simulator: a blocking read of a locked row would wait")
	}
	if sess.inTran && hints["UPDLOCK"] {
		p.lockedBy = id
	}
	return row, nil
}
