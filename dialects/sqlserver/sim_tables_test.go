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

	"github.com/schedlock/schedlock/internal/fakesql"
)

// simTable is a lock table the simulator created from the dialect's
// CREATE TABLE. Column roles are recognised by the preset column names.
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

type simRow struct {
	name, owner     string
	lockedAt, until time.Time
	token           int64
}

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

// output is the OUTPUT row of a changed row: its token, or 1.
func (t *simTable) output(r *simRow) fakesql.Response {
	v := int64(1)
	if t.tokenCol != "" {
		v = r.token
	}
	return fakesql.Response{Columns: []string{""}, Rows: [][]any{{v}}}
}

func (t *simTable) noRow() fakesql.Response { return fakesql.Response{Columns: []string{""}} }

// fits enforces the nvarchar length of the name column (error 2628 since
// SQL Server 2019; 8152 before).
func (t *simTable) fits(name string) error {
	if utf16Len(name) > t.nameUnits {
		return simError(2628, 16, "String or binary data would be truncated in table '%s', column '%s'. Truncated value: '%s'.", t.name, t.nameCol, name)
	}
	return nil
}

// plus adds a duration in milliseconds as the dialect's DATEADD pair does.
func plus(base time.Time, ms int64) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }

var mergeRE = regexp.MustCompile(`^MERGE INTO (\S+)( WITH \(HOLDLOCK\))? AS t\nUSING \(SELECT @p1 AS name, @p2 AS owner, n\.now, `)

// acquire answers the MERGE: insert a new name, take over an expired row,
// leave a live one. Without WITH (HOLDLOCK) it does what SQL Server does
// under READ COMMITTED: it looks for the row, lets other sessions run, and
// inserts, so two sessions may both insert and one gets error 2627.
func (sim *simServer) acquire(q string, args []driver.NamedValue) (fakesql.Response, error) {
	m := mergeRE.FindStringSubmatch(q)
	if m == nil {
		return fakesql.Response{}, fmt.Errorf("simulator: unexpected MERGE %q", q)
	}
	name, err := stringArg(args, 1)
	if err != nil {
		return fakesql.Response{}, err
	}
	owner, err := stringArg(args, 2)
	if err != nil {
		return fakesql.Response{}, err
	}
	atMost, err := intArg(args, 3)
	if err != nil {
		return fakesql.Response{}, err
	}
	holdLock := m[2] != ""
	sim.mu.Lock()
	t, err := sim.table(m[1])
	if err != nil {
		sim.mu.Unlock()
		return fakesql.Response{}, err
	}
	if err := t.checkMerge(q); err != nil {
		sim.mu.Unlock()
		return fakesql.Response{}, err
	}
	if err := t.fits(name); err != nil {
		sim.mu.Unlock()
		return fakesql.Response{}, err
	}
	key := compareKey(name, t.nameBinary)
	now := sim.now()
	if r := t.rows[key]; r != nil {
		defer sim.mu.Unlock()
		if r.until.After(now) {
			return t.noRow(), nil
		}
		r.owner, r.lockedAt, r.until, r.token = owner, now, plus(now, atMost), r.token+1
		return t.output(r), nil
	}
	if !holdLock {
		sim.mu.Unlock()
		runtime.Gosched()
		time.Sleep(100 * time.Microsecond)
		sim.mu.Lock()
	}
	defer sim.mu.Unlock()
	if sim.dupKeyOnInsert != 0 && t.rows[key] == nil {
		t.rows[key] = &simRow{name: name, owner: "other-writer", lockedAt: now, until: plus(now, time.Minute.Milliseconds()), token: 1}
	}
	if t.rows[key] != nil {
		number := sim.dupKeyOnInsert
		if number == 0 {
			number = errDuplicateKey
		}
		if number == errDuplicateIndexKey {
			return fakesql.Response{}, simError(number, 14, "Cannot insert duplicate key row in object 'dbo.%s' with unique index 'ux_%s'. The duplicate key value is (%s).", t.name, t.nameCol, name)
		}
		return fakesql.Response{}, simError(number, 14, "Violation of PRIMARY KEY constraint 'PK__%s'. Cannot insert duplicate key in object 'dbo.%s'. The duplicate key value is (%s).", t.name, t.name, name)
	}
	r := &simRow{name: name, owner: owner, lockedAt: now, until: plus(now, atMost), token: 1}
	t.rows[key] = r
	return t.output(r), nil
}

// durationSQL is how the dialect adds @p3 milliseconds to base.
func durationSQL(base string) string {
	return "DATEADD(millisecond, CAST(@p3 % 86400000 AS int), DATEADD(day, CAST(@p3 / 86400000 AS int), " + base + "))"
}

// checkMerge insists on the clauses that make the MERGE an acquire: the
// name match, the takeover of an expired row only, the insert of a new
// one and the OUTPUT of the token.
func (t *simTable) checkMerge(q string) error {
	out := "\nOUTPUT CAST(1 AS bigint);"
	if t.tokenCol != "" {
		out = "\nOUTPUT inserted." + t.tokenCol + ";"
	}
	for _, clause := range []string{
		durationSQL("n.now") + " AS until FROM (SELECT CAST(SYSUTCDATETIME() AS datetime2(3)) AS now) AS n) AS src\n",
		"\nON t." + t.nameCol + " = src.name\n",
		"\nWHEN MATCHED AND t." + t.untilCol + " <= src.now THEN UPDATE SET " + t.ownerCol + " = src.owner, " + t.lockedAtCol + " = src.now, " + t.untilCol + " = src.until",
		"\nWHEN NOT MATCHED THEN INSERT (" + t.nameCol + ", " + t.ownerCol + ", " + t.lockedAtCol + ", " + t.untilCol,
	} {
		if !strings.Contains(q, clause) {
			return fmt.Errorf("simulator: the MERGE lacks %q: %q", clause, q)
		}
	}
	if !strings.HasSuffix(q, out) {
		return fmt.Errorf("simulator: the MERGE does not end with %q: %q", out, q)
	}
	return nil
}

var updateRE = regexp.MustCompile(`(?s)^UPDATE t SET (\w+) = (.*)\nOUTPUT (?:inserted\.token|CAST\(1 AS bigint\))\nFROM (\S+) AS t CROSS JOIN \(SELECT CAST\(SYSUTCDATETIME\(\) AS datetime2\(3\)\) AS now\) AS n\nWHERE (.*);$`)

// update answers Refresh, Release and Expire, told apart by their SET and
// WHERE clauses.
func (sim *simServer) update(q string, args []driver.NamedValue) (fakesql.Response, error) {
	m := updateRE.FindStringSubmatch(q)
	if m == nil {
		return fakesql.Response{}, fmt.Errorf("simulator: unexpected UPDATE %q", q)
	}
	set, table, where := m[2], m[3], m[4]
	name, err := stringArg(args, 1)
	if err != nil {
		return fakesql.Response{}, err
	}
	sim.mu.Lock()
	defer sim.mu.Unlock()
	t, err := sim.table(table)
	if err != nil {
		return fakesql.Response{}, err
	}
	if m[1] != t.untilCol {
		return fakesql.Response{}, fmt.Errorf("simulator: UPDATE sets %s, not the lease end", m[1])
	}
	now := sim.now()
	r := t.rows[compareKey(name, t.nameBinary)]
	if !strings.Contains(where, "@p2") { // Expire: any owner
		if set != "n.now" || where != "t."+t.nameCol+" = @p1 AND t."+t.untilCol+" > n.now" {
			return fakesql.Response{}, fmt.Errorf("simulator: unexpected expire %q", q)
		}
		if r == nil || !r.until.After(now) {
			return t.noRow(), nil
		}
		r.until = now
		return t.output(r), nil
	}
	owner, err := stringArg(args, 2)
	if err != nil {
		return fakesql.Response{}, err
	}
	ms, err := intArg(args, 3)
	if err != nil {
		return fakesql.Response{}, err
	}
	var token int64
	if t.tokenCol != "" {
		if token, err = intArg(args, 4); err != nil {
			return fakesql.Response{}, err
		}
	}
	wantWhere := "t." + t.nameCol + " = @p1 AND t." + t.ownerCol + " = @p2"
	if t.tokenCol != "" {
		wantWhere += " AND (t.token = @p4 OR @p4 = 0)"
	}
	wantWhere += " AND t." + t.untilCol + " > n.now"
	atLeast := durationSQL("t." + t.lockedAtCol)
	release := "CASE WHEN " + atLeast + " > n.now THEN " + atLeast + " ELSE n.now END"
	if where != wantWhere || (set != durationSQL("n.now") && set != release) {
		return fakesql.Response{}, fmt.Errorf("simulator: unexpected refresh or release %q", q)
	}
	if r == nil || compareKey(r.owner, t.ownerBinary) != compareKey(owner, t.ownerBinary) ||
		(t.tokenCol != "" && token != 0 && r.token != token) || !r.until.After(now) {
		return t.noRow(), nil
	}
	if set == release { // Release: max(locked_at + at-least, now)
		r.until = now
		if atLeast := plus(r.lockedAt, ms); atLeast.After(now) {
			r.until = atLeast
		}
	} else { // Refresh: now + at-most
		r.until = plus(now, ms)
	}
	return t.output(r), nil
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
			token = r.token
		}
		return []any{r.owner, token, r.lockedAt.UnixMilli(), r.until.UnixMilli(), now}
	}
	cols := []string{t.ownerCol, "token", "locked_at_ms", "until_ms", "now_ms"}
	if strings.HasSuffix(q, "\nORDER BY t."+t.nameCol+";") {
		resp := fakesql.Response{Columns: append([]string{t.nameCol}, cols...)}
		var rows []*simRow
		for _, r := range t.rows {
			rows = append(rows, r)
		}
		sort.Slice(rows, func(i, j int) bool { return rows[i].name < rows[j].name })
		for _, r := range rows {
			resp.Rows = append(resp.Rows, append([]any{r.name}, shape(r)...))
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
