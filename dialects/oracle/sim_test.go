package oracle

import (
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
//     ORA-00028) or only marks it for kill (ORA-00031, locks freed later).
type oraSim struct {
	t   testing.TB
	cfg simConfig

	stmts  map[string]simStmt // exact SQL text → what it is
	killRE *regexp.Regexp

	mu        sync.Mutex
	sessions  map[int64]*simSession // by fakesql session id
	allocated map[string]int64      // DBMS_LOCK_ALLOCATED: name → lock id
	nextLock  int64
	ulocks    map[int64]int64      // lock id → holding fakesql session id
	tables    map[string]*simTable // created tables, by upper-case name
	unknown   []string             // statements not understood
	dupKeys   int                  // ORA-00001 answers
	acquires  int                  // MERGE executions
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
}

// simStmt is one statement the server understands.
type simStmt struct {
	kind   string // "table.acquire", "session.trylock", …
	table  string // upper-case table name, table statements only
	schema dialects.Schema
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

type simRow struct {
	owner           string
	lockedAt, until time.Time
	token           int64
}

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
		allocated: map[string]int64{},
		nextLock:  1073741824,
		ulocks:    map[int64]int64{},
		tables:    map[string]*simTable{},
	}
	for op, sql := range parseGolden(t, "session.golden") {
		o.stmts[sql] = simStmt{kind: "session." + op}
	}
	for _, tb := range cfg.Tables {
		s, err := tb.Schema()
		if err != nil {
			t.Fatal(err)
		}
		def := presetSchema(t, s.Preset).Table
		word := regexp.MustCompile(`\b` + regexp.QuoteMeta(def) + `\b`)
		for op, sql := range parseGolden(t, s.Preset+".golden") {
			sql = word.ReplaceAllLiteralString(sql, s.Table)
			o.stmts[sql] = simStmt{kind: "table." + op, table: strings.ToUpper(s.Table), schema: s}
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
	for lock, holder := range o.ulocks {
		if holder == id {
			delete(o.ulocks, lock)
		}
	}
}

// Handle answers one statement.
func (o *oraSim) Handle(fs *fakesql.Session, q string, args []driver.NamedValue) (fakesql.Response, error) {
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
	case "session.trylock", "session.unlock", "session.holds":
		return o.dbmsLock(sess, st.kind, a)
	case "session.holder":
		return o.holder(a)
	case "session.list":
		return o.listLocks()
	case "session.kill.check":
		return o.killCheck(a)
	}
	return o.table(st, a)
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

// dbmsLock runs the TryLock, Unlock and Holds blocks.
func (o *oraSim) dbmsLock(sess *simSession, kind string, a simArgs) (fakesql.Response, error) {
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
	id, ok := o.allocated[name]
	if !ok {
		id = o.nextLock
		o.nextLock++
		o.allocated[name] = id
	}
	me := sess.fs.ID
	request := func() int64 {
		switch holder, held := o.ulocks[id]; {
		case held && holder == me:
			return LockAlreadyOwned
		case held:
			return LockTimeout
		default:
			o.ulocks[id] = me
			return LockSuccess
		}
	}
	release := func() int64 {
		if holder, held := o.ulocks[id]; held && holder == me {
			delete(o.ulocks, id)
			return LockSuccess
		}
		return LockAlreadyOwned
	}
	var rc int64
	switch kind {
	case "session.trylock":
		rc = request()
	case "session.unlock":
		rc = release()
	case "session.holds":
		if rc = request(); rc == LockSuccess {
			release()
		}
	}
	a.setOut(1, rc)
	return fakesql.Response{}, nil
}

func (o *oraSim) holder(a simArgs) (fakesql.Response, error) {
	if o.cfg.NoViews {
		return fakesql.Response{}, oraErr(oraNoSuchTable, "table or view does not exist")
	}
	resp := fakesql.Response{Columns: []string{"INST_ID", "SID", "SERIAL#"}}
	id, ok := o.allocated[a.str(0)]
	if !ok {
		return resp, nil
	}
	if holder, held := o.ulocks[id]; held {
		if s := o.sessions[holder]; s != nil {
			resp.Rows = append(resp.Rows, []any{"1", num(s.sid), num(s.serial)})
		}
	}
	return resp, nil
}

func (o *oraSim) listLocks() (fakesql.Response, error) {
	if o.cfg.NoViews {
		return fakesql.Response{}, oraErr(oraNoSuchTable, "table or view does not exist")
	}
	resp := fakesql.Response{Columns: []string{"INST_ID", "SID", "SERIAL#", "NAME", "LOCKID", "LMODE", "REQUEST", "CTIME", "USERNAME", "MACHINE", "PROGRAM", "AGE"}}
	names := make([]string, 0, len(o.allocated))
	for n := range o.allocated {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		id := o.allocated[n]
		holder, held := o.ulocks[id]
		s := o.sessions[holder]
		if !held || s == nil {
			continue
		}
		resp.Rows = append(resp.Rows, []any{"1", num(s.sid), num(s.serial), n, num(id), "6", "0", "0", o.cfg.User, "sim-host", "schedlock.test",
			num(int64(time.Since(s.logon).Round(time.Second) / time.Second))})
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
			o.freeLocksLocked(target.fs.ID)
		})
		return fakesql.Response{}, oraErr(oraMarkedForKill, "session marked for kill")
	}
	target.killed = true
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
		if s.sid != sid || s.serial != serial || inst != 1 {
			continue
		}
		for _, holder := range o.ulocks {
			if holder == s.fs.ID {
				n++
			}
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
		if tbl != nil {
			return fakesql.Response{}, oraErr(oraNameInUse, "name is already used by an existing object")
		}
		nameCap := nativeNames
		if st.schema.Preset != dialects.PresetSchedlock {
			nameCap = presetNames
		}
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
	hasToken := st.schema.TokenCol != ""
	switch op {
	case "acquire":
		return o.merge(tbl, a.str(0), a.str(1), a.int(2))
	case "refresh", "release":
		name, owner := a.str(1), a.str(2)
		row := tbl.rows[name]
		now := o.now()
		if row == nil || row.owner != owner || !row.until.After(now) || (hasToken && row.token != a.int(3) && a.int(4) != 0) {
			return fakesql.Response{RowsAffected: 0}, nil
		}
		if op == "refresh" {
			row.until = now.Add(time.Duration(a.int(0)) * time.Millisecond)
		} else {
			row.until = maxTime(row.lockedAt.Add(time.Duration(a.int(0))*time.Millisecond), now)
		}
		return fakesql.Response{RowsAffected: 1}, nil
	case "expire":
		row := tbl.rows[a.str(0)]
		now := o.now()
		if row == nil || !row.until.After(now) {
			return fakesql.Response{RowsAffected: 0}, nil
		}
		row.until = now
		return fakesql.Response{RowsAffected: 1}, nil
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

// merge runs the acquire MERGE: a row whose lease ended is taken over; a
// new name is inserted after the insert window, unless another session
// inserted it meanwhile (ORA-00001). o.mu is held; the window releases it.
func (o *oraSim) merge(tbl *simTable, name, owner string, atMostMs int64) (fakesql.Response, error) {
	o.acquires++
	if err := tbl.fits(name, owner); err != nil {
		return fakesql.Response{}, err
	}
	lease := time.Duration(atMostMs) * time.Millisecond
	if row := tbl.rows[name]; row != nil {
		now := o.now()
		if row.until.After(now) {
			return fakesql.Response{RowsAffected: 0}, nil
		}
		row.owner, row.lockedAt, row.until = owner, now, now.Add(lease)
		row.token++
		return fakesql.Response{RowsAffected: 1}, nil
	}
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
			tbl.rows[name] = &simRow{owner: racer, lockedAt: now, until: now.Add(time.Minute), token: 1}
		}
	}
	if tbl.rows[name] != nil {
		o.dupKeys++
		return fakesql.Response{}, oraErr(oraUniqueViolated, "unique constraint (APP.SYS_C0013372) violated")
	}
	now := o.now()
	tbl.rows[name] = &simRow{owner: owner, lockedAt: now, until: now.Add(lease), token: 1}
	return fakesql.Response{RowsAffected: 1}, nil
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
		token = num(row.token)
	}
	return []any{row.owner, token, num(row.lockedAt.UnixMilli()), num(row.until.UnixMilli()), num(o.now().UnixMilli())}
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

// heldLocks returns the number of DBMS_LOCK locks held.
func (o *oraSim) heldLocks() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.ulocks)
}

func num(n int64) string { return strconv.FormatInt(n, 10) }

func oneRow(col string, v any) fakesql.Response {
	return fakesql.Response{Columns: []string{col}, Rows: [][]any{{v}}}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

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
