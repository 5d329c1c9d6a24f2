package oraliketest

import (
	"database/sql"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/dbmslock/dbmslocktest"
	"github.com/schedlock/schedlock/dialects/internal/leasesim"
	"github.com/schedlock/schedlock/dialects/locktable"
	"github.com/schedlock/schedlock/dialects/locktable/locktabletest"
	"github.com/schedlock/schedlock/internal/fakesql"
)

// Builder is the dialect's lease-table SQL.
type Builder interface {
	locktable.Builder
	locktable.Dropper
}

// Dialect is how one database answers: its errors and the shapes of its
// values, for the statements a Server runs.
type Dialect struct {
	// Builder writes the statements of a table in a writer time zone,
	// which the golden files pin in one frame only, and its MaxNameRunes is
	// the width of a created table's name column.
	Builder Builder
	// Number is an integer column's value as the driver returns it (a
	// decimal string from go-ora's NUMBER, an int64 from a BIGINT).
	Number func(int64) any
	// NoSuchTable is the error of a statement on a table that does not
	// exist.
	NoSuchTable func(table string) error
	// Exists is the error of a CREATE of a table that exists.
	Exists func(table string) error
	// IgnoresExists reports whether a CREATE statement swallows Exists
	// itself (Oracle's PL/SQL block around its DDL).
	IgnoresExists func(sql string) bool
	// NoPrivilege is the error of a CREATE without CREATE TABLE.
	NoPrivilege error
	// TooLong is the error of a value of n characters for column col of
	// s, which holds limit.
	TooLong func(s dialects.Schema, col string, n, limit int) error
	// DuplicateKey is the error of an insert of a name table holds.
	DuplicateKey func(table string) error
	// Syntax is the answer to a statement the server does not understand.
	Syntax error
	// SkipLockedRefused is the parser's answer to SKIP LOCKED on a server
	// without it (Config.NoSkipLocked).
	SkipLockedRefused error
	// RowLocked is the answer of FOR UPDATE NOWAIT on a row another
	// session holds.
	RowLocked error
	// Autocommit: every statement but the row-lock probe's holder runs in
	// autocommit, so its FOR UPDATE holds nothing after it (Dameng's
	// driver); otherwise a FOR UPDATE keeps its row until ROLLBACK or the
	// end of the session (go-ora).
	Autocommit bool
	// DropWaits: DROP TABLE of a probe table whose row another session
	// holds would wait for it, which a test must never make the simulator
	// do; otherwise it fails with RowLocked, as Oracle's DDL does.
	DropWaits bool
	// NameColumn answers the catalog read of a name column width
	// characters wide.
	NameColumn func(width int) fakesql.Response
	// Now is the database clock as the lease statements read it.
	Now func() time.Time
}

// Config is the part of the simulated server a test sets.
type Config struct {
	// DBMSLock: the server has the DBMS_LOCK package, which Dameng installs
	// only on request; Oracle always has it (its simulator's NoDBMSLock
	// takes the EXECUTE grant away).
	DBMSLock bool
	// ClockOffset is the database clock minus the host clock.
	ClockOffset time.Duration
	// InsertWindow is how long the MERGE's insert branch takes, during
	// which a concurrent MERGE of the same new name may insert first.
	InsertWindow time.Duration
	// Racer, when set, is asked before every insert of a new name; a
	// non-empty owner means another session inserted that name first with
	// a one-minute lease (the MERGE then fails with DuplicateKey).
	Racer func(name string) (owner string)
	// Tables lists the lock tables whose statements the server knows.
	Tables []dialects.Table
	// NoCreateTable: CREATE TABLE is refused with NoPrivilege.
	NoCreateTable bool
	// NoSkipLocked: the parser rejects SKIP LOCKED.
	NoSkipLocked bool
	// ForUpdateNoLock: SELECT … FOR UPDATE takes no lock at all.
	ForUpdateNoLock bool
}

// Stmt is one statement the server understands.
type Stmt struct {
	Kind   string // "session.trylock", "table.acquire", …
	Table  string // upper-case table name, table statements only
	Schema dialects.Schema
	SQL    string // the statement's text, table statements only
}

// Table is a created lease table.
type Table struct {
	Schema  dialects.Schema
	NameCap int // characters the name column holds
	Rows    map[string]*leasesim.Row
	Dropped bool
}

// ownerCap is the characters the owner column holds.
const ownerCap = 255

// ProbeTable is the row-lock probe's table: its rows (id 1 …) and the
// session holding row 1 FOR UPDATE (0: none).
type ProbeTable struct {
	Rows     int
	LockedBy int64
}

// Server is the shared part of a simulated Oracle or Dameng server. Mu
// guards it; the dialect's simulator holds Mu while it answers.
type Server struct {
	T      testing.TB
	D      Dialect
	Config Config

	// Stmts are the statements understood by their exact text; ProbeRE
	// the row-lock probe's, by op, over any probe table name.
	Stmts   map[string]Stmt
	ProbeRE map[string]*regexp.Regexp

	// Handler is the dialect's simulator, which embeds this Server: the
	// server Open connects to.
	Handler fakesql.Handler
	// Log records what the database last opened by Open sent.
	Log *fakesql.Log

	Mu       sync.Mutex
	Locks    dbmslocktest.Server    // DBMS_LOCK
	Tables   map[string]*Table      // created lease tables, by upper-case name
	Probes   map[string]*ProbeTable // row-lock probe tables, by upper-case name
	Unknown  []string               // statements not understood
	DupKeys  int                    // DuplicateKey answers
	Acquires int                    // MERGE executions
}

// GoldenProbeTable stands for the random name of the row-lock probe's
// table in the golden file.
const GoldenProbeTable = "schedlock_probe_0123456789ab"

// NewServer returns a server that understands the statements of the golden
// files of the working directory's testdata: session.golden (as
// "session.<op>"; its probe.* statements on any probe table name), each
// of files (as "<file without .golden>.<op>"), and, for every table of
// cfg.Tables, its preset's golden file with the table's name (as
// "table.<op>"), in lower and upper case, unquoted names resolving
// whatever their case.
func NewServer(t testing.TB, d Dialect, cfg Config, files ...string) *Server {
	t.Helper()
	s := &Server{
		T: t, D: d, Config: cfg,
		Stmts:   map[string]Stmt{},
		ProbeRE: map[string]*regexp.Regexp{},
		Tables:  map[string]*Table{},
		Probes:  map[string]*ProbeTable{},
	}
	for op, sql := range ParseGolden(t, "session.golden") {
		if strings.HasPrefix(op, "probe.") && strings.Contains(sql, GoldenProbeTable) {
			pattern := strings.ReplaceAll(regexp.QuoteMeta(sql), GoldenProbeTable, `(schedlock_probe_[0-9a-f]{12})`)
			s.ProbeRE[op] = regexp.MustCompile("^" + pattern + "$")
			continue
		}
		s.Stmts[sql] = Stmt{Kind: "session." + op}
	}
	for _, file := range files {
		for op, sql := range ParseGolden(t, file) {
			s.Stmts[sql] = Stmt{Kind: strings.TrimSuffix(file, ".golden") + "." + op}
		}
	}
	for _, tb := range cfg.Tables {
		schema, err := tb.Schema()
		if err != nil {
			t.Fatal(err)
		}
		def := PresetSchema(t, schema.Preset).Table
		word := regexp.MustCompile(`\b` + regexp.QuoteMeta(def) + `\b`)
		statements := ParseGolden(t, schema.Preset+".golden")
		if schema.TimeZone != "" {
			// Statements in a writer time zone render its frame now, as the
			// Locker does; the golden file pins one frame.
			def, statements = schema.Table, map[string]string{}
			for _, sec := range locktabletest.Sections(d.Builder, schema) {
				statements[sec.Op] = sec.SQL
			}
			statements["drop"] = d.Builder.Drop(schema)
		}
		for op, sql := range statements {
			if op == "columns" {
				continue // answered by Columns, for any table
			}
			for _, name := range []string{schema.Table, strings.ToUpper(schema.Table)} {
				text := word.ReplaceAllLiteralString(sql, name)
				// The catalog read names the table as stored: upper case.
				text = strings.ReplaceAll(text, "'"+strings.ToUpper(def)+"'", "'"+strings.ToUpper(schema.Table)+"'")
				s.Stmts[text] = Stmt{Kind: "table." + op, Table: strings.ToUpper(schema.Table), Schema: schema, SQL: text}
			}
		}
	}
	return s
}

// NotUnderstood records q as a statement the server does not know and
// returns the dialect's answer to it. Mu is held.
func (s *Server) NotUnderstood(q string) error {
	s.Unknown = append(s.Unknown, q)
	return s.D.Syntax
}

// AssertUnderstood fails the test when the dialect sent a statement the
// simulator does not know.
func (s *Server) AssertUnderstood(t testing.TB) {
	t.Helper()
	s.Mu.Lock()
	defer s.Mu.Unlock()
	for _, q := range s.Unknown {
		t.Errorf("the dialect sent a statement the simulated server does not know:\n%s", q)
	}
}

// Counts returns the DuplicateKey answers and MERGE executions so far.
func (s *Server) Counts() (dupKeys, acquires int) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.DupKeys, s.Acquires
}

// Waits returns the timeouts of the DBMS_LOCK REQUESTs that waited, in
// order.
func (s *Server) Waits() []int64 {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.Locks.Waits()
}

// HeldLocks returns the number of DBMS_LOCK locks held.
func (s *Server) HeldLocks() int {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.Locks.Held()
}

// ProbeTables returns the row-lock probe tables that still exist.
func (s *Server) ProbeTables() []string {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	out := []string{}
	for t := range s.Probes {
		out = append(out, t)
	}
	return out
}

// End frees what session held, as the server does when it ends: its
// DBMS_LOCK locks and its row locks. Mu is held.
func (s *Server) End(session int64) {
	s.Locks.End(session)
	s.Rollback(session)
}

// Rollback ends the transaction of session: its row locks go. Mu is held.
func (s *Server) Rollback(session int64) {
	for _, p := range s.Probes {
		if p.LockedBy == session {
			p.LockedBy = 0
		}
	}
}

// columnsRE is the read of a table's columns that reads no row.
var columnsRE = regexp.MustCompile(`^SELECT \* FROM ([A-Za-z_][A-Za-z0-9_$.]*) WHERE 1 = 0$`)

// ColumnsOf returns the table that q reads the columns of (SELECT * FROM t
// WHERE 1 = 0), and whether q is such a read.
func ColumnsOf(q string) (string, bool) {
	m := columnsRE.FindStringSubmatch(q)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// Columns answers SELECT * FROM table WHERE 1 = 0 with the lease table's
// columns, in upper case as unquoted names are stored. Mu is held.
func (s *Server) Columns(table string) (fakesql.Response, error) {
	tbl := s.Tables[strings.ToUpper(table)]
	if tbl == nil {
		return fakesql.Response{}, s.D.NoSuchTable(table)
	}
	sc := tbl.Schema
	cols := []string{sc.NameCol, sc.UntilCol, sc.LockedAtCol, sc.OwnerCol}
	if sc.TokenCol != "" {
		cols = append(cols, sc.TokenCol)
	}
	for i := range cols {
		cols[i] = strings.ToUpper(cols[i])
	}
	return fakesql.Response{Columns: cols}, nil
}

// Probe runs the row-lock probe's statement op (a "probe.*" of ProbeRE)
// of session on its table t. Mu is held.
func (s *Server) Probe(session int64, op, t string) (fakesql.Response, error) {
	key := strings.ToUpper(t)
	p := s.Probes[key]
	if p == nil && op != "probe.create" {
		return fakesql.Response{}, s.D.NoSuchTable(t)
	}
	row := func() fakesql.Response {
		resp := fakesql.Response{Columns: []string{"ID"}}
		if p.Rows > 0 {
			resp.Rows = [][]any{{s.D.Number(1)}}
		}
		return resp
	}
	lockedByOther := p != nil && p.LockedBy != 0 && p.LockedBy != session
	// take is a FOR UPDATE that got the row: it holds it until ROLLBACK
	// unless it ran in autocommit.
	take := func(holder bool) {
		if !s.Config.ForUpdateNoLock && (holder || !s.D.Autocommit) {
			p.LockedBy = session
		}
	}
	switch op {
	case "probe.create":
		switch {
		case s.Config.NoCreateTable:
			return fakesql.Response{}, s.D.NoPrivilege
		case p != nil:
			return fakesql.Response{}, s.D.Exists(t)
		}
		s.Probes[key] = &ProbeTable{}
		return fakesql.Response{}, nil
	case "probe.insert":
		p.Rows++
		return fakesql.Response{RowsAffected: 1}, nil
	case "probe.lock":
		if lockedByOther {
			s.T.Errorf("simulator: %s would wait for a row another session holds", op)
			return fakesql.Response{}, s.D.RowLocked
		}
		take(true)
		return row(), nil
	case "probe.skip_locked":
		if s.Config.NoSkipLocked {
			return fakesql.Response{}, s.D.SkipLockedRefused
		}
		if lockedByOther {
			return fakesql.Response{Columns: []string{"ID"}}, nil
		}
		take(false)
		return row(), nil
	case "probe.nowait":
		if lockedByOther {
			return fakesql.Response{}, s.D.RowLocked
		}
		take(false)
		return row(), nil
	case "probe.drop":
		if lockedByOther {
			if s.D.DropWaits {
				s.T.Errorf("simulator: DROP TABLE %s would wait for the row lock of another session", t)
			}
			return fakesql.Response{}, s.D.RowLocked
		}
		delete(s.Probes, key)
		return fakesql.Response{}, nil
	}
	return fakesql.Response{}, s.NotUnderstood(op)
}

// Table runs the lease-table statement st with the bound values a. Mu is
// held; an acquire's insert window releases it.
func (s *Server) Table(st Stmt, a Args) (fakesql.Response, error) {
	tbl := s.Tables[st.Table]
	op := strings.TrimPrefix(st.Kind, "table.")
	switch op {
	case "create":
		switch {
		case s.Config.NoCreateTable:
			return fakesql.Response{}, s.D.NoPrivilege
		case tbl != nil && s.D.IgnoresExists != nil && s.D.IgnoresExists(st.SQL):
			return fakesql.Response{}, nil
		case tbl != nil:
			return fakesql.Response{}, s.D.Exists(st.Table)
		}
		s.Tables[st.Table] = &Table{Schema: st.Schema, NameCap: s.D.Builder.MaxNameRunes(st.Schema), Rows: map[string]*leasesim.Row{}}
		return fakesql.Response{}, nil
	case "drop":
		if tbl != nil {
			tbl.Dropped = true
			delete(s.Tables, st.Table)
		}
		return fakesql.Response{}, nil
	}
	if tbl == nil {
		return fakesql.Response{}, s.D.NoSuchTable(st.Table)
	}
	switch op {
	case "acquire":
		return s.merge(tbl, st, a)
	case "refresh", "release", "expire":
		// UPDATEs, evaluated from their text by the shared lease model.
		n, err := s.lease(tbl).Update(st.SQL, s.env(a))
		if err != nil {
			return fakesql.Response{}, s.NotUnderstood(st.SQL + "\n(" + err.Error() + ")")
		}
		return fakesql.Response{RowsAffected: n}, nil
	case "release-delete", "sweep", "delete":
		n, err := s.lease(tbl).Delete(st.SQL, s.env(a))
		if err != nil {
			return fakesql.Response{}, s.NotUnderstood(st.SQL + "\n(" + err.Error() + ")")
		}
		return fakesql.Response{RowsAffected: n}, nil
	case "name-column":
		return s.D.NameColumn(tbl.NameCap), nil
	case "inspect":
		resp := fakesql.Response{Columns: []string{"OWNER", "TOKEN", "LOCKED_AT", "UNTIL", "NOW"}}
		if row := tbl.Rows[a.Str(0)]; row != nil {
			resp.Rows = [][]any{s.rowValues(tbl, row)}
		}
		return resp, nil
	case "list":
		resp := fakesql.Response{Columns: []string{"NAME", "OWNER", "TOKEN", "LOCKED_AT", "UNTIL", "NOW"}}
		names := make([]string, 0, len(tbl.Rows))
		for n := range tbl.Rows {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			resp.Rows = append(resp.Rows, append([]any{n}, s.rowValues(tbl, tbl.Rows[n])...))
		}
		return resp, nil
	}
	return fakesql.Response{}, s.NotUnderstood(st.Kind)
}

// merge runs the acquire MERGE, evaluated from its text by the shared
// lease model: a row its condition lets it take over is updated; a new
// name is inserted after the insert window, unless another session
// inserted it meanwhile (DuplicateKey). Mu is held; the window releases
// it.
func (s *Server) merge(tbl *Table, st Stmt, a Args) (fakesql.Response, error) {
	s.Acquires++
	if n := utf8.RuneCountInString(a.Str(0)); n > tbl.NameCap {
		return fakesql.Response{}, s.D.TooLong(tbl.Schema, tbl.Schema.NameCol, n, tbl.NameCap)
	}
	if n := utf8.RuneCountInString(a.Str(1)); n > ownerCap {
		return fakesql.Response{}, s.D.TooLong(tbl.Schema, tbl.Schema.OwnerCol, n, ownerCap)
	}
	res, err := s.lease(tbl).Merge(st.SQL, s.env(a))
	if err != nil {
		return fakesql.Response{}, s.NotUnderstood(st.SQL + "\n(" + err.Error() + ")")
	}
	if res.Insert == nil {
		return fakesql.Response{RowsAffected: res.Updated}, nil
	}
	name := res.Insert.Name
	if s.Config.InsertWindow > 0 {
		s.Mu.Unlock()
		time.Sleep(s.Config.InsertWindow)
		s.Mu.Lock()
	}
	if tbl.Dropped {
		return fakesql.Response{}, s.D.NoSuchTable(tbl.Schema.Table)
	}
	if s.Config.Racer != nil && tbl.Rows[name] == nil {
		if racer := s.Config.Racer(name); racer != "" {
			now := s.D.Now()
			tbl.Rows[name] = &leasesim.Row{Name: name, Owner: racer, LockedAt: now, Until: now.Add(time.Minute), Token: 1}
		}
	}
	if tbl.Rows[name] != nil {
		s.DupKeys++
		return fakesql.Response{}, s.D.DuplicateKey(tbl.Schema.Table)
	}
	if st.Schema.TokenCol == "" {
		res.Insert.Token = 0
	}
	tbl.Rows[name] = res.Insert
	return fakesql.Response{RowsAffected: 1}, nil
}

// lease is tbl as the shared lease model's table.
func (s *Server) lease(tbl *Table) *leasesim.Table {
	return &leasesim.Table{Schema: tbl.Schema, Rows: tbl.Rows}
}

// env evaluates a statement with the bound values a: the database clock
// read once, as SYSTIMESTAMP is within one statement.
func (s *Server) env(a Args) leasesim.Env {
	return leasesim.Systimestamp(s.D.Now(), a)
}

// rowValues are owner, token, locked_at, until and now as the driver
// returns them; in a writer time zone the columns hold its wall-clock
// time.
func (s *Server) rowValues(tbl *Table, row *leasesim.Row) []any {
	token := int64(0)
	if tbl.Schema.TokenCol != "" {
		token = row.Token
	}
	loc := tbl.Schema.Location()
	return []any{row.Owner, s.D.Number(token), s.D.Number(dialects.UTCToWall(row.LockedAt, loc).UnixMilli()),
		s.D.Number(dialects.UTCToWall(row.Until, loc).UnixMilli()), s.D.Number(s.D.Now().UnixMilli())}
}

// EngineSim is the simulator whose shared part is s as dbmslocktest's
// engine suite drives it.
func EngineSim(s *Server) dbmslocktest.Sim { return engineSim{s} }

type engineSim struct{ *Server }

func (e engineSim) Open(t *testing.T) (*sql.DB, *fakesql.Log) { return e.Server.Open(t) }

// AnswerWaitsWith makes every later waiting REQUEST answer code.
func (e engineSim) AnswerWaitsWith(code int64) {
	e.Mu.Lock()
	defer e.Mu.Unlock()
	e.Locks.WaitCode = &code
}
