package oracle

import (
	"context"
	"database/sql/driver"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sijms/go-ora/v2/network"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/leasesim"
	"github.com/schedlock/schedlock/dialects/internal/oralike/oraliketest"
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
	// Server runs the golden statements, the lease tables, the row-lock
	// probe and DBMS_LOCK; Mu guards the rest too.
	*oraliketest.Server
	cfg simConfig

	killRE    *regexp.Regexp
	sessions  map[int64]*simSession // by fakesql session id
	liquibase *LiquibaseRow
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
	// Config is the lease tables' server: its clock, the insert race
	// (ORA-00001), CREATE TABLE refused (and missing from SESSION_PRIVS)
	// with ORA-01031, SKIP LOCKED refused with ORA-00933 as a server
	// before it was documented might.
	oraliketest.Config
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

// ignores reports whether sql is a PL/SQL block whose exception handler
// swallows ORA-code, as the server would run it.
func ignores(sql string, code int) bool {
	return strings.HasPrefix(sql, "BEGIN\n") && strings.Contains(sql, fmt.Sprintf("IF SQLCODE != -%d THEN\n      RAISE;", code))
}

type simSession struct {
	fs     *fakesql.Session
	sid    int64
	serial int64
	logon  time.Time
	killed bool
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

// Shared parts of the simulators (package oraliketest).
var (
	parseGolden  = oraliketest.ParseGolden
	presetTables = oraliketest.PresetTables
	presetSchema = oraliketest.PresetSchema
	oneRow       = oraliketest.OneRow
)

// goldenProbeTable stands for the random name of the row-lock probe's
// table in the golden file.
const goldenProbeTable = oraliketest.GoldenProbeTable

// simArgs reads bound values as go-ora receives them.
type simArgs = oraliketest.Args

func newSim(t testing.TB, cfg simConfig) *oraSim {
	t.Helper()
	o := &oraSim{
		cfg:       cfg,
		killRE:    regexp.MustCompile(`^ALTER SYSTEM KILL SESSION '(\d+),(\d+),@(\d+)' IMMEDIATE$`),
		sessions:  map[int64]*simSession{},
		liquibase: cfg.Liquibase,
	}
	o.Server = oraliketest.NewServer(t, oraliketest.Dialect{
		Builder:       &Builder{},
		Number:        func(n int64) any { return num(n) },
		NoSuchTable:   func(string) error { return oraErr(oraNoSuchTable, "table or view does not exist") },
		Exists:        func(string) error { return oraErr(oraNameInUse, "name is already used by an existing object") },
		IgnoresExists: func(sql string) bool { return ignores(sql, oraNameInUse) },
		NoPrivilege:   oraErr(oraInsufficientPrivs, "insufficient privileges"),
		TooLong: func(s dialects.Schema, col string, n, limit int) error {
			return oraErr(oraValueTooLarge, fmt.Sprintf(`value too large for column "APP"."%s"."%s" (actual: %d, maximum: %d)`,
				strings.ToUpper(s.Table), strings.ToUpper(col), n, limit))
		},
		DuplicateKey:      func(string) error { return oraErr(oraUniqueViolated, "unique constraint (APP.SYS_C0013372) violated") },
		Syntax:            oraErr(900, "invalid SQL statement"),
		SkipLockedRefused: oraErr(oraCommandNotEnded, "SQL command not properly ended"),
		RowLocked:         oraErr(oraResourceBusy, "resource busy and acquire with NOWAIT specified or timeout expired"),
		NameColumn: func(width int) fakesql.Response {
			return fakesql.Response{
				Columns: []string{"WIDTH", "UNIT", "COLLATION", "TYPE"},
				Rows:    [][]any{{int64(width), dialects.NameUnitCharacters, nil, fmt.Sprintf("VARCHAR2(%d CHAR)", width)}},
			}
		},
		Now: o.now,
	}, cfg.Config, "liquibase.golden")
	o.Handler = o
	return o
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

// Close ends a session: its user locks and row locks go with it.
func (o *oraSim) Close(fs *fakesql.Session) {
	o.Mu.Lock()
	defer o.Mu.Unlock()
	o.End(fs.ID)
	delete(o.sessions, fs.ID)
}

// Handle answers one statement.
func (o *oraSim) Handle(fs *fakesql.Session, q string, args []driver.NamedValue) (fakesql.Response, error) {
	return o.HandleContext(context.Background(), fs, q, args)
}

// HandleContext answers one statement; a REQUEST with a timeout blocks
// until the lock is free, the timeout runs out or ctx ends (go-ora's
// break, answered with ORA-01013).
func (o *oraSim) HandleContext(ctx context.Context, fs *fakesql.Session, q string, args []driver.NamedValue) (fakesql.Response, error) {
	o.Mu.Lock()
	defer o.Mu.Unlock()
	sess := o.sessions[fs.ID]
	if sess == nil {
		sess = &simSession{fs: fs, sid: 100 + fs.ID, serial: 7000 + 3*fs.ID, logon: time.Now()}
		o.sessions[fs.ID] = sess
	}
	if sess.killed {
		fakesql.Kill(fs)
		return fakesql.Response{}, oraErr(oraSessionKilled, "your session has been killed")
	}
	st, ok := o.Stmts[q]
	if !ok {
		if m := o.killRE.FindStringSubmatch(q); m != nil {
			return o.kill(sess, m)
		}
		if table, ok := oraliketest.ColumnsOf(q); ok {
			return o.columns(table)
		}
		for op, re := range o.ProbeRE {
			if m := re.FindStringSubmatch(q); m != nil {
				return o.Probe(fs.ID, op, m[1])
			}
		}
		switch q {
		case "ROLLBACK":
			o.Rollback(fs.ID)
			return fakesql.Response{}, nil
		case "COMMIT":
			o.Rollback(fs.ID) // the probe's table is never changed in a transaction
			return fakesql.Response{}, nil
		}
		return fakesql.Response{}, o.NotUnderstood(q)
	}
	a := simArgs(args)
	switch st.Kind {
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
		a.SetOut(0, 6)
		return fakesql.Response{}, nil
	case "session.session_user":
		return oneRow("SYS_CONTEXT('USERENV','SESSION_USER')", o.cfg.User), nil
	case "session.trylock", "session.unlock", "session.holds", "session.lock":
		return o.dbmsLock(ctx, sess, st.Kind, a)
	case "session.holder":
		return o.holder(a)
	case "session.list":
		return o.listLocks("")
	case "session.session_lock":
		return o.listLocks(a.Str(0))
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
		return oneRow("COUNT(*)", num(int64(o.Locks.Held()))), nil
	case "session.probe.begin":
		return fakesql.Response{}, nil // SET TRANSACTION: the next statement starts it
	case "session.probe.clock":
		return oneRow("NOW", o.now().Format("2006-01-02 15:04:05.000000")), nil
	case "liquibase.inspect", "liquibase.release", "liquibase.force_release":
		return o.liquibaseStmt(st.Kind, a)
	}
	return o.Table(st, a)
}

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
	return o.Columns(table)
}

// lockTables answers the ALL_TABLES / ALL_SYNONYMS query: the tables of
// the current schema among :1–:4 (no synonyms exist here).
func (o *oraSim) lockTables(a simArgs) (fakesql.Response, error) {
	resp := fakesql.Response{Columns: []string{"TABLE_NAME", "RANK"}}
	for i := 0; i < 4; i++ {
		name := a.Str(i)
		_, exists := o.Tables[name]
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
	if lb.Locked != where || (kind == "liquibase.release" && lb.Owner != a.Str(2)) {
		return fakesql.Response{RowsAffected: 0}, nil
	}
	lb.Locked, lb.Owner, lb.Granted = set, "", time.Time{}
	return fakesql.Response{RowsAffected: 1}, nil
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
	name := a.Str(0)
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
	rc, err := o.Locks.Call(ctx, &o.Mu, sess.fs.ID, strings.TrimPrefix(kind, "session."), name, timeout)
	switch {
	case err != nil && ctx.Err() != nil:
		return fakesql.Response{}, oraErr(oraUserCancel, "user requested cancel of current operation")
	case err != nil:
		return fakesql.Response{}, err
	}
	a.SetOut(1, rc)
	return fakesql.Response{}, nil
}

func (o *oraSim) holder(a simArgs) (fakesql.Response, error) {
	if o.cfg.NoViews {
		return fakesql.Response{}, oraErr(oraNoSuchTable, "table or view does not exist")
	}
	resp := fakesql.Response{Columns: []string{"INST_ID", "SID", "SERIAL#"}}
	if holder, held := o.Locks.Holder(a.Str(0)); held {
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
	for _, l := range o.Locks.Locks() {
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
			o.Mu.Lock()
			defer o.Mu.Unlock()
			target.killed = true
			fakesql.Kill(target.fs) // its connection no longer answers, not even a ping
			o.End(target.fs.ID)
		})
		return fakesql.Response{}, oraErr(oraMarkedForKill, "session marked for kill")
	}
	target.killed = true
	fakesql.Kill(target.fs) // its connection no longer answers, not even a ping
	o.End(target.fs.ID)
	return fakesql.Response{}, nil
}

func (o *oraSim) killCheck(a simArgs) (fakesql.Response, error) {
	if o.cfg.NoViews {
		return fakesql.Response{}, oraErr(oraNoSuchTable, "table or view does not exist")
	}
	sid, serial, inst := a.Int(0), a.Int(1), a.Int(2)
	n := int64(0)
	for _, s := range o.sessions {
		if s.sid == sid && s.serial == serial && inst == 1 {
			n += int64(o.Locks.HeldBy(s.fs.ID))
		}
	}
	return oneRow("COUNT(*)", num(n)), nil
}

func num(n int64) string { return strconv.FormatInt(n, 10) }

// oraUserCancel is ORA-01013, the answer to a break.
const oraUserCancel = 1013
