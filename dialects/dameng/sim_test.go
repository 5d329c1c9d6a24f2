package dameng

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/leasesim"
	"github.com/schedlock/schedlock/dialects/internal/oralike/oraliketest"
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
	// Server runs the golden statements, the lease tables, the row-lock
	// probe and DBMS_LOCK (only when cfg.DBMSLock); Mu guards the rest too.
	*oraliketest.Server
	cfg simConfig

	sessions map[int64]*simSession // by fakesql session id
}

// simConfig is the server the simulator plays.
type simConfig struct {
	Banners        []string // V$VERSION rows
	CompatibleMode string   // COMPATIBLE_MODE; "" with NoModeView unset means "0"
	NoModeView     bool     // V$DM_INI cannot be read
	NoCatalog      bool     // ALL_OBJECTS cannot be read: the probe fails
	User           string   // session user

	// NoKillPrivilege makes SP_CLOSE_SESSION fail for lack of rights.
	NoKillPrivilege bool
	// Config is the lease tables' server and DBMS_LOCK (DBMSLock:
	// SP_CREATE_SYSTEM_PACKAGES(1, 'DBMS_LOCK') has run): its clock, the
	// insert race (-6602), CREATE TABLE refused (and missing from
	// SESSION_PRIVS), SKIP LOCKED rejected by the parser (-2007), FOR
	// UPDATE taking no lock.
	oraliketest.Config

	// The probe's view of the user and the server.
	NoDBA       bool // USER_ROLE_PRIVS lacks DBA
	NoPrivViews bool // USER_ROLE_PRIVS and SESSION_PRIVS cannot be read
	NoLockViews bool // V$LOCK, V$SESSIONS and SYS.DBMS_LOCK_ALLOCATED cannot be read
}

type simSession struct {
	fs      *fakesql.Session
	sessID  int64
	trxID   int64
	created time.Time
	closed  bool
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

// Shared parts of the simulators (package oraliketest).
var (
	parseGolden  = oraliketest.ParseGolden
	presetTables = oraliketest.PresetTables
	presetSchema = oraliketest.PresetSchema
	oneRow       = oraliketest.OneRow
)

// goldenProbeTable stands for the random name of the row-lock probe's
// table (sqlkit.ProbeTableName).
const goldenProbeTable = oraliketest.GoldenProbeTable

// simArgs reads bound values as the driver receives them.
type simArgs = oraliketest.Args

func newSim(t testing.TB, cfg simConfig) *dmSim {
	t.Helper()
	s := &dmSim{cfg: cfg, sessions: map[int64]*simSession{}}
	s.Server = oraliketest.NewServer(t, oraliketest.Dialect{
		Builder:      &Builder{},
		Number:       func(n int64) any { return n },
		NoSuchTable:  errInvalidTable,
		Exists:       errExists,
		NoPrivilege:  errNoPriv,
		TooLong:      func(_ dialects.Schema, col string, _, _ int) error { return errTooLong(col) },
		DuplicateKey: errUnique,
		Syntax:       errSyntax,
		// The parser's refusal of SKIP LOCKED.
		SkipLockedRefused: errSyntax,
		RowLocked:         errRowLock,
		Autocommit:        true,
		DropWaits:         true,
		NameColumn: func(width int) fakesql.Response {
			return fakesql.Response{
				Columns: []string{"WIDTH", "UNIT", "COLLATION", "DATA_TYPE"},
				Rows:    [][]any{{int64(width), dialects.NameUnitCharacters, nil, "VARCHAR"}},
			}
		},
		Now: s.now,
	}, cfg.Config)
	s.Handler = s
	return s
}

// now is the database clock as CAST(SYS_EXTRACT_UTC(SYSTIMESTAMP) AS
// TIMESTAMP(3)) reads it.
func (s *dmSim) now() time.Time {
	return time.Now().Add(s.cfg.ClockOffset).UTC().Truncate(time.Millisecond)
}

// Close ends a session: its DBMS_LOCK locks and row locks go with it.
func (s *dmSim) Close(fs *fakesql.Session) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.End(fs.ID)
	delete(s.sessions, fs.ID)
}

// Handle answers one statement.
func (s *dmSim) Handle(fs *fakesql.Session, q string, args []driver.NamedValue) (fakesql.Response, error) {
	return s.HandleContext(context.Background(), fs, q, args)
}

// HandleContext answers one statement; a REQUEST with a timeout blocks
// until the lock is free, the timeout runs out or ctx ends.
func (s *dmSim) HandleContext(ctx context.Context, fs *fakesql.Session, q string, args []driver.NamedValue) (fakesql.Response, error) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
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
	st, ok := s.Stmts[q]
	if !ok {
		if table, ok := oraliketest.ColumnsOf(q); ok {
			return s.Columns(table)
		}
		for op, re := range s.ProbeRE {
			if m := re.FindStringSubmatch(q); m != nil {
				return s.Probe(fs.ID, op, m[1])
			}
		}
		return fakesql.Response{}, s.NotUnderstood(q)
	}
	switch st.Kind {
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
		return s.dbmsLock(ctx, sess, st.Kind, a)
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
		return oneRow("COUNT(*)", int64(s.Locks.Held())), nil
	case "session.probe.views":
		if s.cfg.NoLockViews {
			return fakesql.Response{}, errNoPriv
		}
		return oneRow("COUNT(*)", int64(s.Locks.Held())), nil
	case "session.probe.clock":
		return oneRow("NOW", s.now().UnixMilli()), nil
	}
	return s.Table(st, a)
}

func countOf(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// dbmsLock runs the TryLock, Unlock, Holds and Lock blocks.
func (s *dmSim) dbmsLock(ctx context.Context, sess *simSession, kind string, a simArgs) (fakesql.Response, error) {
	if !s.cfg.DBMSLock {
		// The dialect must never call a package it has not proven.
		s.Unknown = append(s.Unknown, "DBMS_LOCK called while it is not installed: "+kind)
		return fakesql.Response{}, dmErr(-2106, "无效的表或视图名[DBMS_LOCK]")
	}
	name := a.Str(0)
	if len(name) > MaxLockNameBytes {
		return fakesql.Response{}, errTooLong("LOCKNAME")
	}
	var timeout any
	if kind == "session.lock" {
		timeout = a[2].Value
	}
	rc, err := s.Locks.Call(ctx, &s.Mu, sess.fs.ID, strings.TrimPrefix(kind, "session."), name, timeout)
	if err != nil {
		return fakesql.Response{}, err
	}
	a.SetOut(1, rc)
	return fakesql.Response{}, nil
}

func (s *dmSim) holder(a simArgs) (fakesql.Response, error) {
	resp := fakesql.Response{Columns: []string{"SESS_ID"}}
	if holder, held := s.Locks.Holder(a.Str(0)); held {
		if sess := s.sessions[holder]; sess != nil {
			resp.Rows = append(resp.Rows, []any{sess.sessID})
		}
	}
	return resp, nil
}

func (s *dmSim) listLocks() (fakesql.Response, error) {
	resp := fakesql.Response{Columns: []string{"SESS_ID", "NAME", "LOCKID", "LMODE", "BLOCKED", "USER_NAME", "CLNT_IP", "APPNAME", "DATEDIFF", "NOW"}}
	for _, l := range s.Locks.Locks() {
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
	if s.cfg.NoKillPrivilege {
		return fakesql.Response{}, errNoPriv
	}
	for _, sess := range s.sessions {
		if sess.sessID == a.Int(0) {
			sess.closed = true
			fakesql.Kill(sess.fs)
			s.End(sess.fs.ID)
		}
	}
	return fakesql.Response{}, nil
}

func (s *dmSim) killCheck(a simArgs) (fakesql.Response, error) {
	n := int64(0)
	for _, sess := range s.sessions {
		if sess.sessID == a.Int(0) && !sess.closed {
			n++
		}
	}
	return oneRow("COUNT(*)", n), nil
}
