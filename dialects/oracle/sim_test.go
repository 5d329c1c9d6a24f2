package oracle

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sijms/go-ora/v2/network"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/dbmslock/dbmslocktest"
	"github.com/schedlock/schedlock/dialects/internal/leasesim"
	"github.com/schedlock/schedlock/dialects/locktable/locktabletest"
	"github.com/schedlock/schedlock/internal/fakesql"
)

// oraSim simulates the Oracle server behind this dialect, for tests
// without one. It understands exactly the statements in testdata/*.golden
// (anything else is ORA-00900 and recorded as not understood) and answers
// them as Oracle does, as far as its documentation says:
//
//   - errors are go-ora's *network.OracleError with the server's ORA
//     number and message (ORA-00001, ORA-00942, ORA-00955, ORA-06550 with
//     PLS-00201, ORA-01031, ORA-00030, ORA-00031, ORA-00028, ORA-12899…);
//   - NUMBER columns come back as decimal strings, as go-ora returns them;
//   - DBMS_LOCK: ALLOCATE_UNIQUE maps names to ids from 1073741824,
//     REQUEST/RELEASE answer 0/1/4 per session, locks end with the session;
//   - the lease tables live on a database clock (the host clock plus an
//     offset, cut to milliseconds like CAST(… AS TIMESTAMP(3))), and the
//     MERGE's insert branch leaves a window in which a concurrent MERGE of
//     the same new name inserts first, so the loser gets ORA-00001, as on
//     a real server;
//   - ALTER SYSTEM KILL SESSION ends a session (its next statement gets
//     ORA-00028) or only marks it for kill (ORA-00031, locks freed later);
//   - administration: ALL_TABLES finds the created lock tables (unquoted
//     names, so stored in upper case, and every statement resolves a table
//     name whatever its case), SELECT * … WHERE 1 = 0 gives their columns
//     in upper case, and Liquibase's DATABASECHANGELOGLOCK row is read and
//     released;
//   - the probe: SESSION_PRIVS answers per grant, and the row-lock probe's
//     table has row locks per session that last until ROLLBACK or the end
//     of the session: SKIP LOCKED skips a row another session locked,
//     NOWAIT fails with ORA-00054, and DROP TABLE of a table with a row
//     locked by another session fails with ORA-00054 as DDL does.
type oraSim struct {
	t   testing.TB
	cfg simConfig

	stmts   map[string]simStmt // exact SQL text → what it is
	killRE  *regexp.Regexp
	probeRE map[string]*regexp.Regexp // probe.* op → its statement, any probe table

	mu        sync.Mutex
	sessions  map[int64]*simSession // by fakesql session id
	locks     dbmslocktest.Server   // DBMS_LOCK
	tables    map[string]*simTable  // created tables, by upper-case name
	probes    map[string]*probeTable
	liquibase *LiquibaseRow
	unknown   []string // statements not understood
	dupKeys   int      // ORA-00001 answers
	acquires  int      // MERGE executions
}

// simConfig is the server the simulator plays.
type simConfig struct {
	Product     string // PRODUCT_COMPONENT_VERSION.PRODUCT
	Version     string // .VERSION
	VersionFull string // .VERSION_FULL; "" means the column does not exist (before 18c)
	Banner      string // V$VERSION banner; "" means no row
	Cloud       string // CLOUD_SERVICE; "" is NULL
	NoCloudKey  bool   // CLOUD_SERVICE is not a USERENV parameter (ORA-02003)
	User        string // session user

	NoDBMSLock    bool // EXECUTE on SYS.DBMS_LOCK not granted
	NoViews       bool // no SELECT on GV$LOCK, GV$SESSION, DBMS_LOCK_ALLOCATED
	NoAlterSystem bool // no ALTER SYSTEM
	// MarkForKill, when set, makes a kill answer ORA-00031: the session
	// keeps working and holding its locks for this long, then ends.
	MarkForKill time.Duration
	// InsertWindow is how long the MERGE's insert branch takes, during
	// which a concurrent MERGE of the same new name may insert first.
	InsertWindow time.Duration
	// ClockOffset is the database clock minus the host clock.
	ClockOffset time.Duration
	// Racer, when set, is asked before every insert of a new name; a
	// non-empty owner means another session inserted that name first with
	// a one-minute lease (the MERGE then fails with ORA-00001).
	Racer func(name string) (owner string)
	// Tables lists the lock tables whose statements the server knows.
	Tables []dialects.Table
	// NoCreateTable: SESSION_PRIVS lacks CREATE TABLE, and CREATE TABLE
	// fails with ORA-01031.
	NoCreateTable bool
	// NoSkipLocked: the parser rejects SKIP LOCKED (ORA-00933), as a
	// server before it was documented might.
	NoSkipLocked bool
	// Liquibase, when set, is the row ID = 1 of an existing
	// DATABASECHANGELOGLOCK.
	Liquibase *LiquibaseRow
}

// LiquibaseRow is the simulated DATABASECHANGELOGLOCK row.
type LiquibaseRow struct {
	Locked  bool
	Owner   string
	Granted time.Time // UTC; zero is NULL
}

// probeTable is the row-lock probe's table: one row, id 1.
type probeTable struct {
	rows     int
	lockedBy int64 // fakesql session id holding the row FOR UPDATE; 0 none
}

// simStmt is one statement the server understands.
type simStmt struct {
	kind   string // "table.acquire", "session.trylock", …
	table  string // upper-case table name, table statements only
	schema dialects.Schema
	sql    string
}

// ignores reports whether the statement is a PL/SQL block whose exception
// handler swallows ORA-code, as the server would run it.
func (st simStmt) ignores(code int) bool {
	return strings.HasPrefix(st.sql, "BEGIN\n") && strings.Contains(st.sql, fmt.Sprintf("IF SQLCODE != -%d THEN\n      RAISE;", code))
}

type simSession struct {
	fs     *fakesql.Session
	sid    int64
	serial int64
	logon  time.Time
	killed bool
}

type simTable struct {
	schema   dialects.Schema
	nameCap  int // characters the name column holds
	rows     map[string]*simRow
	dropped  bool
	capOwner int
}

// simRow is a lease row of the shared lease model.
type simRow = leasesim.Row

// config19c is a 19c Enterprise Edition with every grant.
func config19c() simConfig {
	return simConfig{
		Product:     "Oracle Database 19c Enterprise Edition ",
		Version:     "19.0.0.0.0",
		VersionFull: "19.22.0.0.0",
		Banner:      "Oracle Database 19c Enterprise Edition Release 19.0.0.0.0 - Production",
		User:        "APP",
	}
}

// presetTables is one table per preset, under the preset's own name (the
// names of the golden files).
func presetTables() []dialects.Table {
	var out []dialects.Table
	for _, p := range dialects.Presets() {
		out = append(out, dialects.Table{Preset: p})
	}
	return out
}

func newSim(t testing.TB, cfg simConfig) *oraSim {
	t.Helper()
	o := &oraSim{
		t:         t,
		cfg:       cfg,
		stmts:     map[string]simStmt{},
		killRE:    regexp.MustCompile(`^ALTER SYSTEM KILL SESSION '(\d+),(\d+),@(\d+)' IMMEDIATE$`),
		sessions:  map[int64]*simSession{},
		tables:    map[string]*simTable{},
		probes:    map[string]*probeTable{},
		probeRE:   map[string]*regexp.Regexp{},
		liquibase: cfg.Liquibase,
	}
	for op, sql := range parseGolden(t, "session.golden") {
		if strings.HasPrefix(op, "probe.") && strings.Contains(sql, goldenProbeTable) {
			pattern := strings.ReplaceAll(regexp.QuoteMeta(sql), goldenProbeTable, `(schedlock_probe_[0-9a-f]{12})`)
			o.probeRE[op] = regexp.MustCompile("^" + pattern + "$")
			continue
		}
		o.stmts[sql] = simStmt{kind: "session." + op}
	}
	for op, sql := range parseGolden(t, "liquibase.golden") {
		o.stmts[sql] = simStmt{kind: "liquibase." + op}
	}
	for _, tb := range cfg.Tables {
		s, err := tb.Schema()
		if err != nil {
			t.Fatal(err)
		}
		def := presetSchema(t, s.Preset).Table
		word := regexp.MustCompile(`\b` + regexp.QuoteMeta(def) + `\b`)
		statements := parseGolden(t, s.Preset+".golden")
		if s.TimeZone != "" {
			// Statements in a writer time zone render its frame now, as the
			// Locker does; the golden file pins one frame.
			def, statements = s.Table, map[string]string{}
			for _, sec := range locktabletest.Sections(&Builder{}, s) {
				statements[sec.Op] = sec.SQL
			}
			statements["drop"] = (&Builder{}).Drop(s)
		}
		for op, sql := range statements {
			// Unquoted names resolve whatever their case: the statements
			// of "schedlock" and "SCHEDLOCK" address one table.
			for _, name := range []string{s.Table, strings.ToUpper(s.Table)} {
				text := word.ReplaceAllLiteralString(sql, name)
				// The catalog read names the table as stored: upper case.
				text = strings.ReplaceAll(text, "'"+strings.ToUpper(def)+"'", "'"+strings.ToUpper(s.Table)+"'")
				o.stmts[text] = simStmt{kind: "table." + op, table: strings.ToUpper(s.Table), schema: s, sql: text}
			}
		}
	}
	return o
}

// open returns a *sql.DB on the simulated server.
func (o *oraSim) open(t testing.TB) (*sql.DB, *fakesql.Log) {
	t.Helper()
	db, log := fakesql.Open(o)
	t.Cleanup(func() { _ = db.Close() })
	return db, log
}

// oraErr is the error go-ora returns for a server error.
func oraErr(code int, msg string) error {
	return &network.OracleError{ErrCode: code, ErrMsg: fmt.Sprintf("ORA-%05d: %s", code, msg)}
}

// now is the database clock as CAST(SYS_EXTRACT_UTC(SYSTIMESTAMP) AS
// TIMESTAMP(3)) reads it.
func (o *oraSim) now() time.Time {
	return time.Now().Add(o.cfg.ClockOffset).UTC().Round(time.Millisecond)
}

// Close ends a session: its user locks go with it.
func (o *oraSim) Close(fs *fakesql.Session) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.freeLocksLocked(fs.ID)
	delete(o.sessions, fs.ID)
}

func (o *oraSim) freeLocksLocked(id int64) {
	o.locks.End(id)
	o.rollbackLocked(id)
}

// rollbackLocked ends the transaction of session id: its row locks go.
func (o *oraSim) rollbackLocked(id int64) {
	for _, p := range o.probes {
		if p.lockedBy == id {
			p.lockedBy = 0
		}
	}
}

// Handle answers one statement.
func (o *oraSim) Handle(fs *fakesql.Session, q string, args []driver.NamedValue) (fakesql.Response, error) {
	return o.HandleContext(context.Background(), fs, q, args)
}

// HandleContext answers one statement; a REQUEST with a timeout blocks
// until the lock is free, the timeout runs out or ctx ends (go-ora's
// break, answered with ORA-01013).
func (o *oraSim) HandleContext(ctx context.Context, fs *fakesql.Session, q string, args []driver.NamedValue) (fakesql.Response, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	sess := o.sessions[fs.ID]
	if sess == nil {
		sess = &simSession{fs: fs, sid: 100 + fs.ID, serial: 7000 + 3*fs.ID, logon: time.Now()}
		o.sessions[fs.ID] = sess
	}
	if sess.killed {
		fakesql.Kill(fs)
		return fakesql.Response{}, oraErr(oraSessionKilled, "your session has been killed")
	}
	st, ok := o.stmts[q]
	if !ok {
		if m := o.killRE.FindStringSubmatch(q); m != nil {
			return o.kill(sess, m)
		}
		if m := columnsRE.FindStringSubmatch(q); m != nil {
			return o.columns(m[1])
		}
		for op, re := range o.probeRE {
			if m := re.FindStringSubmatch(q); m != nil {
				return o.probe(sess, op, m[1])
			}
		}
		switch q {
		case "ROLLBACK":
			o.rollbackLocked(fs.ID)
			return fakesql.Response{}, nil
		case "COMMIT":
			o.rollbackLocked(fs.ID) // the probe's table is never changed in a transaction
			return fakesql.Response{}, nil
		}
		o.unknown = append(o.unknown, q)
		return fakesql.Response{}, oraErr(900, "invalid SQL statement")
	}
	a := simArgs(args)
	switch st.kind {
	case "session.detect.version":
		return o.detectVersion(), nil
	case "session.detect.banner":
		if o.cfg.Banner == "" {
			return fakesql.Response{Columns: []string{"BANNER"}}, nil
		}
		return oneRow("BANNER", o.cfg.Banner), nil
	case "session.detect.cloud":
		if o.cfg.NoCloudKey {
			return fakesql.Response{}, oraErr(2003, "invalid USERENV parameter")
		}
		if o.cfg.Cloud == "" {
			return oneRow("SYS_CONTEXT('USERENV','CLOUD_SERVICE')", nil), nil
		}
		return oneRow("SYS_CONTEXT('USERENV','CLOUD_SERVICE')", o.cfg.Cloud), nil
	case "session.detect.dbms_lock":
		if o.cfg.NoDBMSLock {
			return fakesql.Response{}, o.pls00201(1)
		}
		a.setOut(0, 6)
		return fakesql.Response{}, nil
	case "session.session_user":
		return oneRow("SYS_CONTEXT('USERENV','SESSION_USER')", o.cfg.User), nil
	case "session.trylock", "session.unlock", "session.holds", "session.lock":
		return o.dbmsLock(ctx, sess, st.kind, a)
	case "session.holder":
		return o.holder(a)
	case "session.list":
		return o.listLocks("")
	case "session.session_lock":
		return o.listLocks(a.str(0))
	case "session.kill.check":
		return o.killCheck(a)
	case "session.lock_tables":
		return o.lockTables(a)
	case "session.probe.privileges":
		return fakesql.Response{Columns: []string{"USER", "ALTER_SYSTEM", "CREATE_TABLE"},
			Rows: [][]any{{o.cfg.User, numBool(!o.cfg.NoAlterSystem), numBool(!o.cfg.NoCreateTable)}}}, nil
	case "session.probe.listing":
		if o.cfg.NoViews {
			return fakesql.Response{}, oraErr(oraNoSuchTable, "table or view does not exist")
		}
		return oneRow("COUNT(*)", num(int64(o.locks.Held()))), nil
	case "session.probe.begin":
		return fakesql.Response{}, nil // SET TRANSACTION: the next statement starts it
	case "session.probe.clock":
		return oneRow("NOW", o.now().Format("2006-01-02 15:04:05.000000")), nil
	case "liquibase.inspect", "liquibase.release", "liquibase.force_release":
		return o.liquibaseStmt(st.kind, a)
	}
	return o.table(st, a)
}

var columnsRE = regexp.MustCompile(`^SELECT \* FROM (\S+) WHERE 1 = 0$`)

func numBool(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// columns answers SELECT * FROM t WHERE 1 = 0 with t's columns, in upper
// case as Oracle stores unquoted names.
func (o *oraSim) columns(table string) (fakesql.Response, error) {
	name := strings.ToUpper(table)
	if name == strings.ToUpper(dialects.LiquibaseTable) && o.liquibase != nil {
		return fakesql.Response{Columns: []string{"ID", "LOCKED", "LOCKGRANTED", "LOCKEDBY"}}, nil
	}
	tbl := o.tables[name]
	if tbl == nil {
		return fakesql.Response{}, oraErr(oraNoSuchTable, "table or view does not exist")
	}
	s := tbl.schema
	cols := []string{s.NameCol, s.UntilCol, s.LockedAtCol, s.OwnerCol}
	if s.TokenCol != "" {
		cols = append(cols, s.TokenCol)
	}
	for i := range cols {
		cols[i] = strings.ToUpper(cols[i])
	}
	return fakesql.Response{Columns: cols}, nil
}

// lockTables answers the ALL_TABLES / ALL_SYNONYMS query: the tables of
// the current schema among :1–:4 (no synonyms exist here).
func (o *oraSim) lockTables(a simArgs) (fakesql.Response, error) {
	resp := fakesql.Response{Columns: []string{"TABLE_NAME", "RANK"}}
	for i := 0; i < 4; i++ {
		name := a.str(i)
		_, exists := o.tables[name]
		if name == strings.ToUpper(dialects.LiquibaseTable) {
			exists = o.liquibase != nil
		}
		if exists && !strings.Contains(name, ".") {
			resp.Rows = append(resp.Rows, []any{name, "0"})
		}
	}
	return resp, nil
}

// liquibaseStmt reads or releases the Liquibase lock row; LOCKED is a
// NUMBER(1), bound from Go booleans as go-ora does (1 or 0).
func (o *oraSim) liquibaseStmt(kind string, a simArgs) (fakesql.Response, error) {
	lb := o.liquibase
	if lb == nil {
		return fakesql.Response{}, oraErr(oraNoSuchTable, "table or view does not exist")
	}
	if kind == "liquibase.inspect" {
		var granted, owner any
		if !lb.Granted.IsZero() {
			granted = num(lb.Granted.UnixMilli())
		}
		if lb.Owner != "" {
			owner = lb.Owner
		}
		return fakesql.Response{Columns: []string{"LOCKED", "GRANTED", "LOCKEDBY", "NOW"},
			Rows: [][]any{{numBool(lb.Locked), granted, owner, num(o.now().UnixMilli())}}}, nil
	}
	set, setOK := a[0].Value.(bool)
	where, whereOK := a[1].Value.(bool)
	if !setOK || !whereOK {
		return fakesql.Response{}, oraErr(932, "inconsistent datatypes: expected NUMBER")
	}
	if lb.Locked != where || (kind == "liquibase.release" && lb.Owner != a.str(2)) {
		return fakesql.Response{RowsAffected: 0}, nil
	}
	lb.Locked, lb.Owner, lb.Granted = set, "", time.Time{}
	return fakesql.Response{RowsAffected: 1}, nil
}

// probe runs one statement of the row-lock probe on table t.
func (o *oraSim) probe(sess *simSession, op, t string) (fakesql.Response, error) {
	me := sess.fs.ID
	p := o.probes[t]
	if p == nil && op != "probe.create" {
		return fakesql.Response{}, oraErr(oraNoSuchTable, "table or view does not exist")
	}
	row := func() fakesql.Response {
		resp := fakesql.Response{Columns: []string{"ID"}}
		if p.rows > 0 {
			resp.Rows = [][]any{{"1"}}
		}
		return resp
	}
	switch op {
	case "probe.create":
		switch {
		case o.cfg.NoCreateTable:
			return fakesql.Response{}, oraErr(oraInsufficientPrivs, "insufficient privileges")
		case p != nil:
			return fakesql.Response{}, oraErr(oraNameInUse, "name is already used by an existing object")
		}
		o.probes[t] = &probeTable{}
		return fakesql.Response{}, nil
	case "probe.insert":
		p.rows++
		return fakesql.Response{RowsAffected: 1}, nil
	case "probe.lock":
		if p.lockedBy != 0 && p.lockedBy != me {
			o.t.Errorf("simulator: %s would wait for a row another session holds", op)
			return fakesql.Response{}, oraErr(oraResourceBusy, "resource busy (the simulator does not wait)")
		}
		p.lockedBy = me
		return row(), nil
	case "probe.skip_locked":
		if o.cfg.NoSkipLocked {
			return fakesql.Response{}, oraErr(oraCommandNotEnded, "SQL command not properly ended")
		}
		if p.lockedBy != 0 && p.lockedBy != me {
			return fakesql.Response{Columns: []string{"ID"}}, nil
		}
		p.lockedBy = me
		return row(), nil
	case "probe.nowait":
		if p.lockedBy != 0 && p.lockedBy != me {
			return fakesql.Response{}, oraErr(oraResourceBusy, "resource busy and acquire with NOWAIT specified or timeout expired")
		}
		p.lockedBy = me
		return row(), nil
	case "probe.drop":
		if p.lockedBy != 0 && p.lockedBy != me {
			return fakesql.Response{}, oraErr(oraResourceBusy, "resource busy and acquire with NOWAIT specified or timeout expired")
		}
		delete(o.probes, t)
		return fakesql.Response{}, nil
	}
	o.unknown = append(o.unknown, op)
	return fakesql.Response{}, oraErr(900, "invalid SQL statement")
}

// probeTables returns the probe tables that still exist.
func (o *oraSim) probeTables() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for t := range o.probes {
		out = append(out, t)
	}
	return out
}

// pls00201 is the compile error of a block naming SYS.DBMS_LOCK without
// EXECUTE on it.
func (o *oraSim) pls00201(line int) error {
	return &network.OracleError{ErrCode: oraPLSQLCompileFailed, ErrMsg: fmt.Sprintf(
		"ORA-06550: line %d, column 3:\nPLS-00201: identifier 'SYS.DBMS_LOCK' must be declared\nORA-06550: line %d, column 3:\nPL/SQL: Statement ignored", line, line)}
}

func (o *oraSim) detectVersion() fakesql.Response {
	cols := []string{"PRODUCT", "VERSION", "STATUS"}
	row := []any{o.cfg.Product, o.cfg.Version, "Production"}
	if o.cfg.VersionFull != "" {
		cols = append(cols, "VERSION_FULL")
		row = append(row, o.cfg.VersionFull)
	}
	cols = append(cols, "SCHEDLOCK_SESSION_USER")
	row = append(row, o.cfg.User)
	if o.cfg.Product == "" {
		return fakesql.Response{Columns: cols}
	}
	return fakesql.Response{Columns: cols, Rows: [][]any{row}}
}

// dbmsLock runs the TryLock, Unlock, Holds and Lock blocks.
func (o *oraSim) dbmsLock(ctx context.Context, sess *simSession, kind string, a simArgs) (fakesql.Response, error) {
	if o.cfg.NoDBMSLock {
		return fakesql.Response{}, o.pls00201(4)
	}
	name := a.str(0)
	switch {
	case len(name) > MaxLockNameBytes:
		return fakesql.Response{}, oraErr(6502, "PL/SQL: numeric or value error: character string buffer too small")
	case strings.HasPrefix(name, "ORA$"):
		return fakesql.Response{}, oraErr(20000, "ORU-10003: lock name ORA$… is reserved")
	}
	var timeout any
	if kind == "session.lock" {
		timeout = a[2].Value
	}
	rc, err := o.locks.Call(ctx, &o.mu, sess.fs.ID, strings.TrimPrefix(kind, "session."), name, timeout)
	switch {
	case err != nil && ctx.Err() != nil:
		return fakesql.Response{}, oraErr(oraUserCancel, "user requested cancel of current operation")
	case err != nil:
		return fakesql.Response{}, err
	}
	a.setOut(1, rc)
	return fakesql.Response{}, nil
}

func (o *oraSim) holder(a simArgs) (fakesql.Response, error) {
	if o.cfg.NoViews {
		return fakesql.Response{}, oraErr(oraNoSuchTable, "table or view does not exist")
	}
	resp := fakesql.Response{Columns: []string{"INST_ID", "SID", "SERIAL#"}}
	if holder, held := o.locks.Holder(a.str(0)); held {
		if s := o.sessions[holder]; s != nil {
			resp.Rows = append(resp.Rows, []any{"1", num(s.sid), num(s.serial)})
		}
	}
	return resp, nil
}

// listLocks answers the listing, or with name the session_lock query
// (the holder of that DBMS_LOCK name).
func (o *oraSim) listLocks(name string) (fakesql.Response, error) {
	if o.cfg.NoViews {
		return fakesql.Response{}, oraErr(oraNoSuchTable, "table or view does not exist")
	}
	resp := fakesql.Response{Columns: []string{"INST_ID", "SID", "SERIAL#", "NAME", "LOCKID", "LMODE", "REQUEST", "CTIME", "USERNAME", "MACHINE", "PROGRAM", "AGE", "NOW"}}
	for _, l := range o.locks.Locks() {
		s := o.sessions[l.Session]
		if (name != "" && l.Name != name) || s == nil {
			continue
		}
		resp.Rows = append(resp.Rows, []any{"1", num(s.sid), num(s.serial), l.Name, num(l.ID), "6", "0",
			num(int64(time.Since(l.Since) / time.Second)), o.cfg.User, "sim-host", "schedlock.test",
			num(int64(time.Since(s.logon).Round(time.Second) / time.Second)), num(o.now().UnixMilli())})
	}
	return resp, nil
}

// kill runs ALTER SYSTEM KILL SESSION 'sid,serial#,@inst' IMMEDIATE.
func (o *oraSim) kill(me *simSession, m []string) (fakesql.Response, error) {
	if o.cfg.NoAlterSystem {
		return fakesql.Response{}, oraErr(oraInsufficientPrivs, "insufficient privileges")
	}
	sid, _ := strconv.ParseInt(m[1], 10, 64)
	serial, _ := strconv.ParseInt(m[2], 10, 64)
	var target *simSession
	for _, s := range o.sessions {
		if s.sid == sid && s.serial == serial && m[3] == "1" {
			target = s
		}
	}
	switch {
	case target == nil:
		return fakesql.Response{}, oraErr(oraNoSuchSession, "User session ID does not exist.")
	case target == me:
		return fakesql.Response{}, oraErr(oraKillOwnSession, "cannot kill current session")
	}
	if d := o.cfg.MarkForKill; d > 0 {
		// The session is busy in a call: it ends, and frees its locks,
		// only when that call returns.
		time.AfterFunc(d, func() {
			o.mu.Lock()
			defer o.mu.Unlock()
			target.killed = true
			fakesql.Kill(target.fs) // its connection no longer answers, not even a ping
			o.freeLocksLocked(target.fs.ID)
		})
		return fakesql.Response{}, oraErr(oraMarkedForKill, "session marked for kill")
	}
	target.killed = true
	fakesql.Kill(target.fs) // its connection no longer answers, not even a ping
	o.freeLocksLocked(target.fs.ID)
	return fakesql.Response{}, nil
}

func (o *oraSim) killCheck(a simArgs) (fakesql.Response, error) {
	if o.cfg.NoViews {
		return fakesql.Response{}, oraErr(oraNoSuchTable, "table or view does not exist")
	}
	sid, serial, inst := a.int(0), a.int(1), a.int(2)
	n := int64(0)
	for _, s := range o.sessions {
		if s.sid == sid && s.serial == serial && inst == 1 {
			n += int64(o.locks.HeldBy(s.fs.ID))
		}
	}
	return oneRow("COUNT(*)", num(n)), nil
}

// table runs a lease-table statement. o.mu is held.
func (o *oraSim) table(st simStmt, a simArgs) (fakesql.Response, error) {
	tbl := o.tables[st.table]
	op := strings.TrimPrefix(st.kind, "table.")
	switch op {
	case "create":
		switch {
		case o.cfg.NoCreateTable:
			return fakesql.Response{}, oraErr(oraInsufficientPrivs, "insufficient privileges")
		case tbl != nil && st.ignores(oraNameInUse):
			return fakesql.Response{}, nil
		case tbl != nil:
			return fakesql.Response{}, oraErr(oraNameInUse, "name is already used by an existing object")
		}
		nameCap := (&Builder{}).MaxNameRunes(st.schema)
		o.tables[st.table] = &simTable{schema: st.schema, nameCap: nameCap, capOwner: 255, rows: map[string]*simRow{}}
		return fakesql.Response{}, nil
	case "drop":
		if tbl != nil {
			tbl.dropped = true
			delete(o.tables, st.table)
		}
		return fakesql.Response{}, nil
	}
	if tbl == nil {
		return fakesql.Response{}, oraErr(oraNoSuchTable, "table or view does not exist")
	}
	switch op {
	case "acquire":
		return o.merge(tbl, st, a)
	case "refresh", "release", "expire":
		// UPDATEs, evaluated from their text by the shared lease model.
		n, err := o.lease(tbl).Update(st.sql, o.env(a))
		if err != nil {
			return fakesql.Response{}, o.notUnderstood(st, err)
		}
		return fakesql.Response{RowsAffected: n}, nil
	case "release-delete", "sweep", "delete":
		n, err := o.lease(tbl).Delete(st.sql, o.env(a))
		if err != nil {
			return fakesql.Response{}, o.notUnderstood(st, err)
		}
		return fakesql.Response{RowsAffected: n}, nil
	case "name-column":
		return fakesql.Response{
			Columns: []string{"WIDTH", "UNIT", "COLLATION", "TYPE"},
			Rows:    [][]any{{int64(tbl.nameCap), dialects.NameUnitCharacters, nil, fmt.Sprintf("VARCHAR2(%d CHAR)", tbl.nameCap)}},
		}, nil
	case "inspect":
		resp := fakesql.Response{Columns: []string{"OWNER", "TOKEN", "LOCKED_AT", "UNTIL", "NOW"}}
		if row := tbl.rows[a.str(0)]; row != nil {
			resp.Rows = [][]any{o.rowValues(tbl, row)}
		}
		return resp, nil
	case "list":
		resp := fakesql.Response{Columns: []string{"NAME", "OWNER", "TOKEN", "LOCKED_AT", "UNTIL", "NOW"}}
		names := make([]string, 0, len(tbl.rows))
		for n := range tbl.rows {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			resp.Rows = append(resp.Rows, append([]any{n}, o.rowValues(tbl, tbl.rows[n])...))
		}
		return resp, nil
	}
	o.unknown = append(o.unknown, st.kind)
	return fakesql.Response{}, oraErr(900, "invalid SQL statement")
}

// merge runs the acquire MERGE, evaluated from its text by the shared
// lease model: a row its condition lets it take over is updated; a new
// name is inserted after the insert window, unless another session
// inserted it meanwhile (ORA-00001). o.mu is held; the window releases it.
func (o *oraSim) merge(tbl *simTable, st simStmt, a simArgs) (fakesql.Response, error) {
	o.acquires++
	if err := tbl.fits(a.str(0), a.str(1)); err != nil {
		return fakesql.Response{}, err
	}
	res, err := o.lease(tbl).Merge(st.sql, o.env(a))
	if err != nil {
		return fakesql.Response{}, o.notUnderstood(st, err)
	}
	if res.Insert == nil {
		return fakesql.Response{RowsAffected: res.Updated}, nil
	}
	name := res.Insert.Name
	if o.cfg.InsertWindow > 0 {
		o.mu.Unlock()
		time.Sleep(o.cfg.InsertWindow)
		o.mu.Lock()
	}
	if tbl.dropped {
		return fakesql.Response{}, oraErr(oraNoSuchTable, "table or view does not exist")
	}
	if o.cfg.Racer != nil && tbl.rows[name] == nil {
		if racer := o.cfg.Racer(name); racer != "" {
			now := o.now()
			tbl.rows[name] = &simRow{Name: name, Owner: racer, LockedAt: now, Until: now.Add(time.Minute), Token: 1}
		}
	}
	if tbl.rows[name] != nil {
		o.dupKeys++
		return fakesql.Response{}, oraErr(oraUniqueViolated, "unique constraint (APP.SYS_C0013372) violated")
	}
	if st.schema.TokenCol == "" {
		res.Insert.Token = 0
	}
	tbl.rows[name] = res.Insert
	return fakesql.Response{RowsAffected: 1}, nil
}

// lease is tbl as the shared lease model's table.
func (o *oraSim) lease(tbl *simTable) *leasesim.Table {
	return &leasesim.Table{Schema: tbl.schema, Rows: tbl.rows}
}

// env evaluates a statement as Oracle would, with the bound values a: the
// database clock read once, as SYSTIMESTAMP is within one statement.
func (o *oraSim) env(a simArgs) leasesim.Env {
	return leasesim.Systimestamp(o.now(), a)
}

// notUnderstood records a statement the lease model cannot run, and is
// the server's answer to it.
func (o *oraSim) notUnderstood(st simStmt, err error) error {
	o.unknown = append(o.unknown, st.sql+"\n("+err.Error()+")")
	return oraErr(900, "invalid SQL statement")
}

// fits checks the column lengths, in characters (VARCHAR2(n CHAR)).
func (tbl *simTable) fits(name, owner string) error {
	col := func(col string, value string, limit int) error {
		if n := utf8.RuneCountInString(value); n > limit {
			return oraErr(oraValueTooLarge, fmt.Sprintf(`value too large for column "APP"."%s"."%s" (actual: %d, maximum: %d)`,
				strings.ToUpper(tbl.schema.Table), strings.ToUpper(col), n, limit))
		}
		return nil
	}
	if err := col(tbl.schema.NameCol, name, tbl.nameCap); err != nil {
		return err
	}
	return col(tbl.schema.OwnerCol, owner, tbl.capOwner)
}

// rowValues are owner, token, locked_at, until and now as go-ora returns
// them: a string and NUMBERs as decimal strings.
func (o *oraSim) rowValues(tbl *simTable, row *simRow) []any {
	token := "0"
	if tbl.schema.TokenCol != "" {
		token = num(row.Token)
	}
	// In a writer time zone the columns hold its wall-clock time.
	loc := tbl.schema.Location()
	return []any{row.Owner, token, num(dialects.UTCToWall(row.LockedAt, loc).UnixMilli()), num(dialects.UTCToWall(row.Until, loc).UnixMilli()), num(o.now().UnixMilli())}
}

// assertUnderstood fails the test when the dialect sent a statement the
// simulator does not know.
func (o *oraSim) assertUnderstood(t testing.TB) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, q := range o.unknown {
		t.Errorf("the dialect sent a statement the simulated server does not know:\n%s", q)
	}
}

// counts returns the ORA-00001 answers and MERGE executions so far.
func (o *oraSim) counts() (dupKeys, acquires int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.dupKeys, o.acquires
}

// waits returns the timeouts of the REQUESTs that waited, in order.
func (o *oraSim) waits() []int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.locks.Waits()
}

// heldLocks returns the number of DBMS_LOCK locks held.
func (o *oraSim) heldLocks() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.locks.Held()
}

func num(n int64) string { return strconv.FormatInt(n, 10) }

func oneRow(col string, v any) fakesql.Response {
	return fakesql.Response{Columns: []string{col}, Rows: [][]any{{v}}}
}

// oraUserCancel is ORA-01013, the answer to a break.
const oraUserCancel = 1013

// simArgs reads bound values as go-ora would receive them.
type simArgs []driver.NamedValue

func (a simArgs) str(i int) string {
	if i >= len(a) {
		return ""
	}
	s, _ := a[i].Value.(string)
	return s
}

func (a simArgs) int(i int) int64 {
	if i >= len(a) {
		return 0
	}
	switch v := a[i].Value.(type) {
	case int64:
		return v
	case int:
		return int64(v)
	}
	return 0
}

// setOut stores v in the sql.Out bound at i, as go-ora fills OUT binds.
func (a simArgs) setOut(i int, v int64) {
	if i >= len(a) {
		return
	}
	out, ok := a[i].Value.(sql.Out)
	if !ok {
		return
	}
	if p, ok := out.Dest.(*int64); ok {
		*p = v
	}
}
