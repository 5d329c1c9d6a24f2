package dameng

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
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
	"github.com/schedlock/schedlock/dialects/locktable/locktabletest"
	"github.com/schedlock/schedlock/internal/fakesql"
)

// DmError has the shape of the Go driver's *dm.DmError
// (gitee.com/chunanyong/dm): exported ErrCode int32 (negative for server
// errors) and ErrText, and an Error() text "Error <code>: <text>" followed
// by a stack trace. The simulator answers with it, so the dialect's error
// matching (ErrorCode, IsDuplicateKey, IsMissingTable) is exercised
// against what the driver really returns, without importing the driver.
type DmError struct {
	ErrCode int32
	ErrText string
}

func (e *DmError) Error() string {
	return fmt.Sprintf("Error %d: %s\nstack info:\n   1).  gitee.com/chunanyong/dm.(*DmError).throw\n", e.ErrCode, e.ErrText)
}

func dmErr(code int32, text string) error { return &DmError{ErrCode: code, ErrText: text} }

// Server errors the simulator raises. -2106 and -6602 are the documented
// codes the dialect relies on; the others stand for errors whose codes are
// unverified ([U]) and which the dialect matches on other grounds (text,
// or a follow-up read), so their numbers do not matter to it.
var (
	errInvalidTable = func(table string) error {
		return dmErr(codeInvalidTable, "第1 行附近出现错误:\n无效的表或视图名["+strings.ToUpper(table)+"]")
	}
	errUnique = func(table string) error {
		return dmErr(codeUniqueViolated, "违反表["+strings.ToUpper(table)+"]唯一性约束条件[INDEX33555472]")
	}
	errExists   = func(table string) error { return dmErr(-2124, "对象["+strings.ToUpper(table)+"]已存在") } // [U] code
	errTooLong  = func(col string) error { return dmErr(-6169, "列["+strings.ToUpper(col)+"]长度超出定义") }   // [U] code
	errNoPriv   = dmErr(-5501, "权限不足")                                                                  // [U] code
	errSyntax   = dmErr(codeSyntax, "语法分析出错")                                                           // for statements the simulator does not know
	errRowLock  = dmErr(codeLockRefused, "锁超时")                                                         // [U] code and text: NOWAIT on a locked row
	errNoModeVw = dmErr(-2106, "第1 行附近出现错误:\n无效的表或视图名[V$DM_INI]")
)

// dmSim simulates the DM8 server behind this dialect, for tests without
// one. It understands exactly the statements in testdata/*.golden (plus
// the column probe SELECT * FROM t WHERE 1 = 0); anything else is a syntax
// error and recorded as not understood. It answers as DM8 does as far as
// known, and as this dialect assumes where unknown ([U] in
// docs/dialects/dameng.md):
//
//   - errors are *DmError values with the server's codes;
//   - BIGINT and COUNT(*) columns come back as int64, text as string;
//   - DBMS_LOCK (only when cfg.DBMSLock): ALLOCATE_UNIQUE maps names to ids
//     from 1073741824, REQUEST/RELEASE answer 0/1/4 per session through
//     the OUT bind, locks end with the session; V$LOCK shows a held lock
//     as an OBJECT lock whose TABLE_ID is the lock id;
//   - the lease tables live on a database clock (the host clock plus an
//     offset, cut to milliseconds like CAST(… AS TIMESTAMP(3))), and the
//     MERGE's insert branch leaves a window in which a concurrent MERGE of
//     the same new name inserts first, so the loser gets -6602;
//   - SP_CLOSE_SESSION ends a session: its locks are freed and its
//     connection is dead;
//   - the capability probe: USER_ROLE_PRIVS and SESSION_PRIVS answer per
//     grant, the lock views per cfg, and the row-lock probe's table (any
//     schedlock_probe_ name) keeps the holder's FOR UPDATE row lock until
//     its session ends. The simulator cannot see database/sql
//     transactions, so it takes the holder's SELECT … FOR UPDATE to run in
//     one (sqlkit.RowLockProbe.BeginTx) and every other FOR UPDATE to run in
//     autocommit, holding nothing after the statement.
type dmSim struct {
	t   testing.TB
	cfg simConfig

	stmts     map[string]simStmt // exact SQL text → what it is
	columnsRE *regexp.Regexp
	probeRE   map[string]*regexp.Regexp // probe.* op → its statement, any probe table

	mu       sync.Mutex
	sessions map[int64]*simSession  // by fakesql session id
	locks    dbmslocktest.Server    // DBMS_LOCK (only when cfg.DBMSLock)
	tables   map[string]*simTable   // by upper-case name
	probes   map[string]*probeTable // row-lock probe tables, by upper-case name
	unknown  []string               // statements not understood
	dupKeys  int                    // -6602 answers
	acquires int                    // MERGE executions
	kills    int                    // SP_CLOSE_SESSION calls
}

// simConfig is the server the simulator plays.
type simConfig struct {
	Banners        []string // V$VERSION rows
	CompatibleMode string   // COMPATIBLE_MODE; "" with NoModeView unset means "0"
	NoModeView     bool     // V$DM_INI cannot be read
	NoCatalog      bool     // ALL_OBJECTS cannot be read: the probe fails
	User           string   // session user

	// DBMSLock: SP_CREATE_SYSTEM_PACKAGES(1, 'DBMS_LOCK') has run.
	DBMSLock bool
	// ReRequestGrants makes REQUEST of a lock the session already owns
	// answer 0 instead of 4 and take it once more (see
	// dbmslocktest.Server.ReRequestGrants).
	ReRequestGrants bool
	// NoKillPrivilege makes SP_CLOSE_SESSION fail for lack of rights.
	NoKillPrivilege bool
	// InsertWindow is how long the MERGE's insert branch takes, during
	// which a concurrent MERGE of the same new name may insert first.
	InsertWindow time.Duration
	// ClockOffset is the database clock minus the host clock.
	ClockOffset time.Duration
	// Racer, when set, is asked before every insert of a new name; a
	// non-empty owner means another session inserted that name first with
	// a one-minute lease (the MERGE then fails with -6602).
	Racer func(name string) (owner string)
	// Tables lists the lock tables whose statements the server knows.
	Tables []dialects.Table

	// The probe's view of the user and the server.
	NoDBA           bool // USER_ROLE_PRIVS lacks DBA
	NoCreateTable   bool // SESSION_PRIVS lacks CREATE TABLE, and CREATE TABLE is refused
	NoPrivViews     bool // USER_ROLE_PRIVS and SESSION_PRIVS cannot be read
	NoLockViews     bool // V$LOCK, V$SESSIONS and SYS.DBMS_LOCK_ALLOCATED cannot be read
	NoSkipLocked    bool // the parser rejects SKIP LOCKED (-2007)
	ForUpdateNoLock bool // SELECT … FOR UPDATE takes no lock at all
}

// probeTable is the row-lock probe's table: its rows and the session
// holding row 1 FOR UPDATE (0: none).
type probeTable struct {
	rows     int
	lockedBy int64
}

type simStmt struct {
	kind   string // "table.acquire", "session.trylock", …
	table  string // upper-case table name, table statements only
	schema dialects.Schema
	sql    string // the statement's text, table statements only
}

type simSession struct {
	fs      *fakesql.Session
	sessID  int64
	trxID   int64
	created time.Time
	closed  bool
}

type simTable struct {
	schema  dialects.Schema
	nameCap int
	rows    map[string]*simRow
	dropped bool
}

// simRow is a lease row of the shared lease model.
type simRow = leasesim.Row

// configDM8 is a DM8 server in its default mode, DBMS_LOCK not installed
// (as a fresh database is).
func configDM8() simConfig {
	return simConfig{
		Banners:        []string{"DM Database Server 64 V8", "DB Version: 0x7000c", "03134284094-20230927-215406-20097"},
		CompatibleMode: "0",
		User:           "APP",
	}
}

// configWithDBMSLock is configDM8 with DBMS_LOCK installed.
func configWithDBMSLock() simConfig {
	cfg := configDM8()
	cfg.DBMSLock = true
	return cfg
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

func newSim(t testing.TB, cfg simConfig) *dmSim {
	t.Helper()
	s := &dmSim{
		t:         t,
		cfg:       cfg,
		stmts:     map[string]simStmt{},
		columnsRE: regexp.MustCompile(`^SELECT \* FROM ([A-Za-z_][A-Za-z0-9_$.]*) WHERE 1 = 0$`),
		sessions:  map[int64]*simSession{},
		locks:     dbmslocktest.Server{ReRequestGrants: cfg.ReRequestGrants},
		tables:    map[string]*simTable{},
		probes:    map[string]*probeTable{},
		probeRE:   map[string]*regexp.Regexp{},
	}
	for op, q := range parseGolden(t, "session.golden") {
		if strings.HasPrefix(op, "probe.") && strings.Contains(q, goldenProbeTable) {
			pattern := strings.ReplaceAll(regexp.QuoteMeta(q), goldenProbeTable, `(schedlock_probe_[0-9a-f]{12})`)
			s.probeRE[op] = regexp.MustCompile("^" + pattern + "$")
			continue
		}
		s.stmts[q] = simStmt{kind: "session." + op}
	}
	for _, tb := range cfg.Tables {
		schema, err := tb.Schema()
		if err != nil {
			t.Fatal(err)
		}
		def := presetSchema(t, schema.Preset).Table
		word := regexp.MustCompile(`\b` + regexp.QuoteMeta(def) + `\b`)
		statements := parseGolden(t, schema.Preset+".golden")
		if schema.TimeZone != "" {
			// Statements in a writer time zone render its frame now, as the
			// Locker does; the golden file pins one frame.
			def, statements = schema.Table, map[string]string{}
			for _, sec := range locktabletest.Sections(&Builder{}, schema) {
				statements[sec.Op] = sec.SQL
			}
			statements["drop"] = (&Builder{}).Drop(schema)
		}
		for op, q := range statements {
			if op == "columns" {
				continue // answered by columnsRE, for any table
			}
			q = word.ReplaceAllLiteralString(q, schema.Table)
			// The catalog read names the table as stored: upper case.
			q = strings.ReplaceAll(q, "'"+strings.ToUpper(def)+"'", "'"+strings.ToUpper(schema.Table)+"'")
			s.stmts[q] = simStmt{kind: "table." + op, table: strings.ToUpper(schema.Table), schema: schema, sql: q}
		}
	}
	return s
}

// open returns a *sql.DB on the simulated server.
func (s *dmSim) open(t testing.TB) (*sql.DB, *fakesql.Log) {
	t.Helper()
	db, log := fakesql.Open(s)
	t.Cleanup(func() { _ = db.Close() })
	return db, log
}

// now is the database clock as CAST(SYS_EXTRACT_UTC(SYSTIMESTAMP) AS
// TIMESTAMP(3)) reads it.
func (s *dmSim) now() time.Time {
	return time.Now().Add(s.cfg.ClockOffset).UTC().Truncate(time.Millisecond)
}

// Close ends a session: its DBMS_LOCK locks go with it.
func (s *dmSim) Close(fs *fakesql.Session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.freeLocksLocked(fs.ID)
	delete(s.sessions, fs.ID)
}

func (s *dmSim) freeLocksLocked(id int64) {
	s.locks.End(id)
	for _, p := range s.probes {
		if p.lockedBy == id {
			p.lockedBy = 0
		}
	}
}

// Handle answers one statement.
func (s *dmSim) Handle(fs *fakesql.Session, q string, args []driver.NamedValue) (fakesql.Response, error) {
	return s.HandleContext(context.Background(), fs, q, args)
}

// HandleContext answers one statement; a REQUEST with a timeout blocks
// until the lock is free, the timeout runs out or ctx ends.
func (s *dmSim) HandleContext(ctx context.Context, fs *fakesql.Session, q string, args []driver.NamedValue) (fakesql.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.sessions[fs.ID]
	if sess == nil {
		sess = &simSession{fs: fs, sessID: 140737000000000 + 4096*fs.ID, trxID: 9000 + fs.ID, created: time.Now()}
		s.sessions[fs.ID] = sess
	}
	if sess.closed {
		fakesql.Kill(fs)
		return fakesql.Response{}, driver.ErrBadConn
	}
	a := simArgs(args)
	st, ok := s.stmts[q]
	if !ok {
		if m := s.columnsRE.FindStringSubmatch(q); m != nil {
			return s.columns(m[1])
		}
		for op, re := range s.probeRE {
			if m := re.FindStringSubmatch(q); m != nil {
				return s.probe(sess, op, m[1])
			}
		}
		s.unknown = append(s.unknown, q)
		return fakesql.Response{}, errSyntax
	}
	switch st.kind {
	case "session.detect.version":
		resp := fakesql.Response{Columns: []string{"BANNER"}}
		for _, b := range s.cfg.Banners {
			resp.Rows = append(resp.Rows, []any{b})
		}
		return resp, nil
	case "session.detect.mode":
		if s.cfg.NoModeView {
			return fakesql.Response{}, errNoModeVw
		}
		return oneRow("PARA_VALUE", s.cfg.CompatibleMode), nil
	case "session.detect.dbms_lock":
		if s.cfg.NoCatalog {
			return fakesql.Response{}, errNoPriv
		}
		n := int64(0)
		if s.cfg.DBMSLock {
			n = 1
		}
		return oneRow("COUNT(*)", n), nil
	case "session.trylock", "session.unlock", "session.holds", "session.lock":
		return s.dbmsLock(ctx, sess, st.kind, a)
	case "session.holder":
		return s.holder(a)
	case "session.list":
		return s.listLocks()
	case "session.kill":
		return s.kill(a)
	case "session.kill.check":
		return s.killCheck(a)
	case "session.probe.privileges":
		if s.cfg.NoPrivViews {
			return fakesql.Response{}, errInvalidTable("USER_ROLE_PRIVS")
		}
		return fakesql.Response{Columns: []string{"USER", "DBA", "CREATE_TABLE"},
			Rows: [][]any{{s.cfg.User, countOf(!s.cfg.NoDBA), countOf(!s.cfg.NoCreateTable)}}}, nil
	case "session.probe.listing":
		switch {
		case s.cfg.NoLockViews:
			return fakesql.Response{}, errNoPriv
		case !s.cfg.DBMSLock:
			return fakesql.Response{}, errInvalidTable("SYS.DBMS_LOCK_ALLOCATED")
		}
		return oneRow("COUNT(*)", int64(s.locks.Held())), nil
	case "session.probe.views":
		if s.cfg.NoLockViews {
			return fakesql.Response{}, errNoPriv
		}
		return oneRow("COUNT(*)", int64(s.locks.Held())), nil
	case "session.probe.clock":
		return oneRow("NOW", s.now().UnixMilli()), nil
	}
	return s.table(st, a)
}

func countOf(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// probe runs one statement of the row-lock probe on table t. s.mu is held.
func (s *dmSim) probe(sess *simSession, op, t string) (fakesql.Response, error) {
	me := sess.fs.ID
	key := strings.ToUpper(t)
	p := s.probes[key]
	if p == nil && op != "probe.create" {
		return fakesql.Response{}, errInvalidTable(t)
	}
	row := func() fakesql.Response {
		resp := fakesql.Response{Columns: []string{"ID"}}
		if p.rows > 0 {
			resp.Rows = [][]any{{int64(1)}}
		}
		return resp
	}
	lockedByOther := p != nil && p.lockedBy != 0 && p.lockedBy != me
	switch op {
	case "probe.create":
		switch {
		case s.cfg.NoCreateTable:
			return fakesql.Response{}, errNoPriv
		case p != nil:
			return fakesql.Response{}, errExists(t)
		}
		s.probes[key] = &probeTable{}
		return fakesql.Response{}, nil
	case "probe.insert":
		p.rows++
		return fakesql.Response{RowsAffected: 1}, nil
	case "probe.lock":
		if lockedByOther {
			s.t.Errorf("simulator: %s would wait for a row another session holds", op)
			return fakesql.Response{}, errRowLock
		}
		if !s.cfg.ForUpdateNoLock {
			p.lockedBy = me
		}
		return row(), nil
	case "probe.skip_locked":
		if s.cfg.NoSkipLocked {
			return fakesql.Response{}, errSyntax
		}
		if lockedByOther {
			return fakesql.Response{Columns: []string{"ID"}}, nil
		}
		return row(), nil
	case "probe.nowait":
		if lockedByOther {
			return fakesql.Response{}, errRowLock
		}
		return row(), nil
	case "probe.drop":
		if lockedByOther {
			s.t.Errorf("simulator: DROP TABLE %s would wait for the row lock of another session", t)
			return fakesql.Response{}, errRowLock
		}
		delete(s.probes, key)
		return fakesql.Response{}, nil
	}
	s.unknown = append(s.unknown, op)
	return fakesql.Response{}, errSyntax
}

// probeTables returns the row-lock probe tables that still exist.
func (s *dmSim) probeTables() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []string{}
	for t := range s.probes {
		out = append(out, t)
	}
	return out
}

// dbmsLock runs the TryLock, Unlock, Holds and Lock blocks.
func (s *dmSim) dbmsLock(ctx context.Context, sess *simSession, kind string, a simArgs) (fakesql.Response, error) {
	if !s.cfg.DBMSLock {
		// The dialect must never call a package it has not proven.
		s.unknown = append(s.unknown, "DBMS_LOCK called while it is not installed: "+kind)
		return fakesql.Response{}, dmErr(-2106, "无效的表或视图名[DBMS_LOCK]")
	}
	name := a.str(0)
	if len(name) > MaxLockNameBytes {
		return fakesql.Response{}, errTooLong("LOCKNAME")
	}
	var timeout any
	if kind == "session.lock" {
		timeout = a[2].Value
	}
	rc, err := s.locks.Call(ctx, &s.mu, sess.fs.ID, strings.TrimPrefix(kind, "session."), name, timeout)
	if err != nil {
		return fakesql.Response{}, err
	}
	a.setOut(1, rc)
	return fakesql.Response{}, nil
}

func (s *dmSim) holder(a simArgs) (fakesql.Response, error) {
	resp := fakesql.Response{Columns: []string{"SESS_ID"}}
	if holder, held := s.locks.Holder(a.str(0)); held {
		if sess := s.sessions[holder]; sess != nil {
			resp.Rows = append(resp.Rows, []any{sess.sessID})
		}
	}
	return resp, nil
}

func (s *dmSim) listLocks() (fakesql.Response, error) {
	resp := fakesql.Response{Columns: []string{"SESS_ID", "NAME", "LOCKID", "LMODE", "BLOCKED", "USER_NAME", "CLNT_IP", "APPNAME", "DATEDIFF", "NOW"}}
	for _, l := range s.locks.Locks() {
		sess := s.sessions[l.Session]
		if sess == nil {
			continue
		}
		resp.Rows = append(resp.Rows, []any{sess.sessID, l.Name, l.ID, "X", int64(0), s.cfg.User, "10.0.0.7", "schedlock.test",
			int64(time.Since(sess.created) / time.Second), s.now().UnixMilli()})
	}
	return resp, nil
}

// kill runs CALL SP_CLOSE_SESSION(?).
func (s *dmSim) kill(a simArgs) (fakesql.Response, error) {
	s.kills++
	if s.cfg.NoKillPrivilege {
		return fakesql.Response{}, errNoPriv
	}
	for _, sess := range s.sessions {
		if sess.sessID == a.int(0) {
			sess.closed = true
			fakesql.Kill(sess.fs)
			s.freeLocksLocked(sess.fs.ID)
		}
	}
	return fakesql.Response{}, nil
}

func (s *dmSim) killCheck(a simArgs) (fakesql.Response, error) {
	n := int64(0)
	for _, sess := range s.sessions {
		if sess.sessID == a.int(0) && !sess.closed {
			n++
		}
	}
	return oneRow("COUNT(*)", n), nil
}

// columns answers SELECT * FROM t WHERE 1 = 0: the column names, upper
// case as DM stores unquoted names, or -2106.
func (s *dmSim) columns(table string) (fakesql.Response, error) {
	tbl := s.tables[strings.ToUpper(table)]
	if tbl == nil {
		return fakesql.Response{}, errInvalidTable(table)
	}
	sc := tbl.schema
	cols := []string{sc.NameCol, sc.UntilCol, sc.LockedAtCol, sc.OwnerCol}
	if sc.TokenCol != "" {
		cols = append(cols, sc.TokenCol)
	}
	for i := range cols {
		cols[i] = strings.ToUpper(cols[i])
	}
	return fakesql.Response{Columns: cols}, nil
}

// table runs a lease-table statement. s.mu is held.
func (s *dmSim) table(st simStmt, a simArgs) (fakesql.Response, error) {
	tbl := s.tables[st.table]
	op := strings.TrimPrefix(st.kind, "table.")
	switch op {
	case "create":
		if tbl != nil {
			return fakesql.Response{}, errExists(st.table)
		}
		nameCap := (&Builder{}).MaxNameRunes(st.schema)
		s.tables[st.table] = &simTable{schema: st.schema, nameCap: nameCap, rows: map[string]*simRow{}}
		return fakesql.Response{}, nil
	case "drop":
		if tbl != nil {
			tbl.dropped = true
			delete(s.tables, st.table)
		}
		return fakesql.Response{}, nil
	}
	if tbl == nil {
		return fakesql.Response{}, errInvalidTable(st.table)
	}
	switch op {
	case "acquire":
		return s.merge(tbl, st, a)
	case "refresh", "release", "expire":
		// UPDATEs, evaluated from their text by the shared lease model.
		n, err := s.lease(tbl).Update(st.sql, s.env(a))
		if err != nil {
			return fakesql.Response{}, s.notUnderstood(st, err)
		}
		return fakesql.Response{RowsAffected: n}, nil
	case "release-delete", "sweep", "delete":
		n, err := s.lease(tbl).Delete(st.sql, s.env(a))
		if err != nil {
			return fakesql.Response{}, s.notUnderstood(st, err)
		}
		return fakesql.Response{RowsAffected: n}, nil
	case "name-column":
		return fakesql.Response{
			Columns: []string{"WIDTH", "UNIT", "COLLATION", "DATA_TYPE"},
			Rows:    [][]any{{int64(tbl.nameCap), dialects.NameUnitCharacters, nil, "VARCHAR"}},
		}, nil
	case "inspect":
		resp := fakesql.Response{Columns: []string{"OWNER", "TOKEN", "LOCKED_AT", "UNTIL", "NOW"}}
		if row := tbl.rows[a.str(0)]; row != nil {
			resp.Rows = [][]any{s.rowValues(tbl, row)}
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
			resp.Rows = append(resp.Rows, append([]any{n}, s.rowValues(tbl, tbl.rows[n])...))
		}
		return resp, nil
	}
	s.unknown = append(s.unknown, st.kind)
	return fakesql.Response{}, errSyntax
}

// merge runs the acquire MERGE, evaluated from its text by the shared
// lease model: a row its condition lets it take over is updated; a new
// name is inserted after the insert window, unless another session
// inserted it meanwhile (-6602). s.mu is held; the window releases it.
func (s *dmSim) merge(tbl *simTable, st simStmt, a simArgs) (fakesql.Response, error) {
	s.acquires++
	if n := utf8.RuneCountInString(a.str(0)); n > tbl.nameCap {
		return fakesql.Response{}, errTooLong(tbl.schema.NameCol)
	}
	if utf8.RuneCountInString(a.str(1)) > 255 {
		return fakesql.Response{}, errTooLong(tbl.schema.OwnerCol)
	}
	res, err := s.lease(tbl).Merge(st.sql, s.env(a))
	if err != nil {
		return fakesql.Response{}, s.notUnderstood(st, err)
	}
	if res.Insert == nil {
		return fakesql.Response{RowsAffected: res.Updated}, nil
	}
	name := res.Insert.Name
	if s.cfg.InsertWindow > 0 {
		s.mu.Unlock()
		time.Sleep(s.cfg.InsertWindow)
		s.mu.Lock()
	}
	if tbl.dropped {
		return fakesql.Response{}, errInvalidTable(tbl.schema.Table)
	}
	if s.cfg.Racer != nil && tbl.rows[name] == nil {
		if racer := s.cfg.Racer(name); racer != "" {
			now := s.now()
			tbl.rows[name] = &simRow{Name: name, Owner: racer, LockedAt: now, Until: now.Add(time.Minute), Token: 1}
		}
	}
	if tbl.rows[name] != nil {
		s.dupKeys++
		return fakesql.Response{}, errUnique(tbl.schema.Table)
	}
	if st.schema.TokenCol == "" {
		res.Insert.Token = 0
	}
	tbl.rows[name] = res.Insert
	return fakesql.Response{RowsAffected: 1}, nil
}

// lease is tbl as the shared lease model's table.
func (s *dmSim) lease(tbl *simTable) *leasesim.Table {
	return &leasesim.Table{Schema: tbl.schema, Rows: tbl.rows}
}

// env evaluates a statement as Dameng would, with the bound values a: the
// database clock read once, as SYSTIMESTAMP is within one statement.
func (s *dmSim) env(a simArgs) leasesim.Env {
	return leasesim.Systimestamp(s.now(), a)
}

// notUnderstood records a statement the lease model cannot run, and is
// the server's answer to it.
func (s *dmSim) notUnderstood(st simStmt, err error) error {
	s.unknown = append(s.unknown, st.sql+"\n("+err.Error()+")")
	return errSyntax
}

// rowValues are owner, token, locked_at, until and now as the driver
// returns them: a string and BIGINTs as int64.
func (s *dmSim) rowValues(tbl *simTable, row *simRow) []any {
	token := int64(0)
	if tbl.schema.TokenCol != "" {
		token = row.Token
	}
	// In a writer time zone the columns hold its wall-clock time.
	loc := tbl.schema.Location()
	return []any{row.Owner, token, dialects.UTCToWall(row.LockedAt, loc).UnixMilli(), dialects.UTCToWall(row.Until, loc).UnixMilli(), s.now().UnixMilli()}
}

// assertUnderstood fails the test when the dialect sent a statement the
// simulator does not know.
func (s *dmSim) assertUnderstood(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, q := range s.unknown {
		t.Errorf("the dialect sent a statement the simulated server does not know:\n%s", q)
	}
}

// counts returns the -6602 answers and MERGE executions so far.
func (s *dmSim) counts() (dupKeys, acquires int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dupKeys, s.acquires
}

// waits returns the timeouts of the REQUESTs that waited, in order.
func (s *dmSim) waits() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.locks.Waits()
}

// heldLocks returns the number of DBMS_LOCK locks held.
func (s *dmSim) heldLocks() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.locks.Held()
}

func oneRow(col string, v any) fakesql.Response {
	return fakesql.Response{Columns: []string{col}, Rows: [][]any{{v}}}
}

// simArgs reads bound values as the driver would receive them.
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

// setOut stores v in the sql.Out bound at i, as the driver fills OUT binds.
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
