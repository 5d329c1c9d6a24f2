package postgres

import (
	"database/sql"
	"database/sql/driver"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/leasesim"
	"github.com/schedlock/schedlock/internal/fakesql"
)

// pgSim simulates a PostgreSQL-wire server (KingbaseES, openGauss,
// CockroachDB, …) behind this dialect, for tests without one. It
// understands exactly the statements pinned in testdata (the session
// statements of session.golden with the names the simulated server has,
// the KingbaseES detection probes of kingbase.detect.golden, the
// lease-table statements of <preset>.<op>.golden, or openGauss's acquire
// of opengauss.<preset>.acquire.golden) plus version(), aurora_version()
// and DROP TABLE; anything else is a syntax error (42601) and recorded as
// not understood. The lease-table writes run from their text through the
// shared lease model (dialects/internal/leasesim), so a statement whose
// condition means the opposite behaves the opposite here, whatever the
// golden file pins. It answers as the server's documentation says:
//
//   - errors are pgx's *pgconn.PgError with the server's SQLSTATE: 42P01
//     undefined table, 42883 undefined function, 42704 unknown setting,
//     22001 value too long, 40001 serialization failure;
//   - advisory locks are per session, stack, and go with the session;
//     unlock by a session that does not hold the key answers false; the
//     lock functions are strict (a NULL key answers NULL, locks nothing);
//     a stub server answers true to every try and locks nothing
//     (CockroachDB);
//   - terminate ends the session (its next statement fails as a dropped
//     connection) and frees its locks; pids are 1000 + the session number;
//   - lease tables live on a database clock (the host clock plus an
//     offset, cut to milliseconds like date_trunc), and each statement is
//     atomic, as ON CONFLICT and ON DUPLICATE KEY UPDATE are.
type pgSim struct {
	t   testing.TB
	cfg pgSimConfig

	stmts map[string]pgStmt // exact SQL text → what it is

	mu       sync.Mutex
	sessions map[int64]*pgSession // by pid
	advisory map[int64]*advLock   // by key
	tables   map[string]*pgTable  // by table name
	unknown  []string
	counts   map[string]int  // statements answered, by kind
	writes   int             // lease-table writes seen, for SerializationEvery
	aborted  int             // 40001 answers
	retried  map[string]bool // writes aborted once, which pass when sent again
	probes   map[string]*probeTable
}

// pgSimConfig is the server the simulator plays.
type pgSimConfig struct {
	Banner string
	// Mode is what SHOW database_mode answers; "" means the setting does
	// not exist (42704). ModeBySettingOnly makes SHOW a syntax error, so
	// only current_setting answers.
	Mode              string
	ModeBySettingOnly bool
	// Names are the catalog names the server has ("pg_locks",
	// "sys_locks", "pg_try_advisory_lock", …); nil means every pg_ name.
	Names []string
	// Stub makes every try-lock answer true without locking anything.
	Stub bool
	// BrokenUnlock (a mutation) lets any session's unlock free a lock.
	BrokenUnlock bool
	// TakeOverLive (a mutation) lets acquire take over a live lease.
	TakeOverLive bool
	// OpenGauss makes the lease-table acquire the ON DUPLICATE KEY UPDATE
	// statement of openGauss instead of ON CONFLICT.
	OpenGauss bool
	// SerializationEvery > 0 answers every n-th lease-table write
	// (acquire, refresh, release, expire) with 40001 and changes nothing.
	SerializationEvery int
	// ClockOffset is the database clock minus the host clock.
	ClockOffset time.Duration
	// Isolation is the default isolation level (default "read committed").
	Isolation string
	// Tables lists the lock tables whose statements the server knows.
	Tables []dialects.Table
}

// pgStmt is one statement the server understands.
type pgStmt struct {
	kind   string // "session.trylock", "table.acquire", "exists", …
	name   string // the catalog name an "exists" probe uses
	table  string // table statements: the table
	schema dialects.Schema
	args   []string // table statements: what $1, $2, … are
	sql    string   // table statements: the text
}

type pgSession struct {
	fs     *fakesql.Session
	pid    int64
	killed bool
}

type advLock struct {
	holder int64 // pid
	count  int
}

type pgTable struct {
	schema  dialects.Schema
	nameCap int
	rows    map[string]*pgRow
}

// pgRow is a lease row of the shared lease model.
type pgRow = leasesim.Row

// pgNames are every pg_ catalog name.
var pgNames = []string{"pg_locks", "pg_stat_activity", "pg_database", "pg_backend_pid", "pg_try_advisory_lock", "pg_advisory_unlock", "pg_terminate_backend"}

// sysNames are every sys_ catalog name (KingbaseES with the sys_ names only).
var sysNames = []string{"sys_locks", "sys_stat_activity", "sys_database", "sys_backend_pid", "sys_try_advisory_lock", "sys_advisory_unlock", "sys_terminate_backend"}

// presetTables is one table per preset, under the preset's own name (the
// names of the golden files).
func presetTables() []dialects.Table {
	var out []dialects.Table
	for _, p := range dialects.Presets() {
		out = append(out, dialects.Table{Preset: p})
	}
	return out
}

func newPgSim(t testing.TB, cfg pgSimConfig) *pgSim {
	t.Helper()
	if cfg.Names == nil {
		cfg.Names = pgNames
	}
	if cfg.Tables == nil {
		cfg.Tables = presetTables()
	}
	s := &pgSim{
		t: t, cfg: cfg,
		stmts:    map[string]pgStmt{},
		sessions: map[int64]*pgSession{},
		advisory: map[int64]*advLock{},
		tables:   map[string]*pgTable{},
		counts:   map[string]int{},
		retried:  map[string]bool{},
		probes:   map[string]*probeTable{},
	}
	// Session statements: session.golden with each pg_ name replaced by
	// the name this server has (its own pg_ name, else its sys_ one).
	for _, sec := range parseSections(t, "session.golden") {
		s.stmts[s.named(sec.sql)] = pgStmt{kind: "session." + sec.op}
	}
	for _, sec := range parseSections(t, "kingbase.detect.golden") {
		kind, name, _ := strings.Cut(sec.op, " ")
		s.stmts[sec.sql] = pgStmt{kind: kind, name: name}
	}
	for _, tb := range cfg.Tables {
		schema, err := tb.Schema()
		if err != nil {
			t.Fatal(err)
		}
		ops := []string{"acquire", "refresh", "release", "expire", "inspect", "list", "create", "name-column"}
		if schema.ReleaseDeletesRow() {
			ops = append(ops, "release-delete", "sweep", "delete")
		}
		for _, op := range ops {
			file := schema.Preset + "." + op + ".golden"
			if op == "acquire" && cfg.OpenGauss {
				file = "opengauss." + file
			}
			sql, args := readStmtGolden(t, file)
			s.stmts[sql] = pgStmt{kind: "table." + op, table: schema.Table, schema: schema, args: args, sql: sql}
		}
		// The batch refresh is one text whatever the batch's size: $1 the
		// names, $2 the owner, $3 at-most, $4 the tokens.
		batch := Builder{}.RefreshBatch(schema, 2).SQL
		batchArgs := []string{"names", "owner", "at_most"}
		if schema.TokenCol != "" {
			batchArgs = append(batchArgs, "tokens")
		}
		s.stmts[batch] = pgStmt{kind: "table.refresh-batch", table: schema.Table, schema: schema, args: batchArgs, sql: batch}
		s.stmts["DROP TABLE IF EXISTS "+schema.Table] = pgStmt{kind: "table.drop", table: schema.Table, schema: schema}
	}
	return s
}

// readStmtGolden reads a lease-table golden file: its SQL and, from its
// "-- args:" line, what each placeholder is.
func readStmtGolden(t testing.TB, file string) (string, []string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	var args []string
	var body []string
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "-- args: "):
			for _, a := range strings.Fields(strings.TrimPrefix(line, "-- args: ")) {
				if _, v, ok := strings.Cut(a, "="); ok {
					args = append(args, v)
				}
			}
		case strings.HasPrefix(line, "-- result: "):
		default:
			body = append(body, line)
		}
	}
	return strings.Join(body, "\n"), args
}

// open returns a *sql.DB on the simulated server.
func (s *pgSim) open(t testing.TB) *sql.DB {
	t.Helper()
	db, _ := fakesql.Open(s)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func pgErr(code, msg string) error {
	return &pgconn.PgError{Severity: "ERROR", Code: code, Message: msg}
}

// now is the database clock as date_trunc('milliseconds', clock_timestamp()) reads it.
func (s *pgSim) now() time.Time {
	return time.Now().Add(s.cfg.ClockOffset).UTC().Truncate(time.Millisecond)
}

// named is sql with each pg_ name the server lacks replaced by its sys_
// name, as this server would need it written.
func (s *pgSim) named(sql string) string {
	for i, pg := range pgNames {
		if !s.has(pg) && s.has(sysNames[i]) {
			sql = regexp.MustCompile(`\b`+pg+`\b`).ReplaceAllLiteralString(sql, sysNames[i])
		}
	}
	// The blocking lock function is named like the try function.
	if !s.has("pg_try_advisory_lock") && s.has("sys_try_advisory_lock") {
		sql = regexp.MustCompile(`\bpg_advisory_lock\b`).ReplaceAllLiteralString(sql, "sys_advisory_lock")
	}
	return sql
}

func (s *pgSim) has(name string) bool {
	for _, n := range s.cfg.Names {
		if n == name {
			return true
		}
	}
	return false
}

// Close ends a session: its advisory locks go with it.
func (s *pgSim) Close(fs *fakesql.Session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.endLocked(1000 + fs.ID)
}

func (s *pgSim) endLocked(pid int64) {
	for key, l := range s.advisory {
		if l.holder == pid {
			delete(s.advisory, key)
		}
	}
	delete(s.sessions, pid)
}

func (s *pgSim) session(fs *fakesql.Session) *pgSession {
	pid := 1000 + fs.ID
	if ss := s.sessions[pid]; ss != nil {
		return ss
	}
	ss := &pgSession{fs: fs, pid: pid}
	s.sessions[pid] = ss
	return ss
}

func one(cols []string, vals ...any) fakesql.Response {
	return fakesql.Response{Columns: cols, Rows: [][]any{vals}}
}

func none(cols ...string) fakesql.Response { return fakesql.Response{Columns: cols} }

// Handle answers one statement.
func (s *pgSim) Handle(fs *fakesql.Session, query string, args []driver.NamedValue) (fakesql.Response, error) {
	if st, ok := s.stmts[query]; ok && st.kind == "session.lock" {
		return s.blockingLock(fs, args)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.session(fs)
	switch query {
	case "SELECT version()":
		return one([]string{"version"}, s.cfg.Banner), nil
	case detectSQL:
		// The banner, no aurora_version(), and the lease table's
		// existence from the simulator's tables.
		name, _ := args[0].Value.(string)
		_, exists := s.tables[name]
		return one([]string{"version", "exists", "?column?"}, s.cfg.Banner, false, exists), nil
	case "SELECT aurora_version()":
		return fakesql.Response{}, pgErr(codeUndefinedFunction, "function aurora_version() does not exist")
	case "SELECT current_user":
		return one([]string{"current_user"}, "app"), nil
	}
	if resp, err, ok := s.probe(ss, query, args); ok {
		if err == nil {
			s.counts["probe"]++
		}
		return resp, err
	}
	if resp, ok := s.findByKey(query, args); ok {
		s.counts["session.find"]++
		return resp, nil
	}
	st, ok := s.stmts[query]
	if !ok {
		s.unknown = append(s.unknown, query)
		return fakesql.Response{}, pgErr(codeSyntaxError, "syntax error (the simulator does not know this statement)")
	}
	s.counts[st.kind]++
	arg := func(i int) any { return args[i].Value }
	switch st.kind {
	case "mode":
		switch {
		case s.cfg.ModeBySettingOnly:
			return fakesql.Response{}, pgErr(codeSyntaxError, `syntax error at or near "database_mode"`)
		case s.cfg.Mode == "":
			return fakesql.Response{}, pgErr(codeUndefinedObject, `unrecognized configuration parameter "database_mode"`)
		}
		return one([]string{"database_mode"}, s.cfg.Mode), nil
	case "mode-setting":
		if s.cfg.Mode == "" {
			return one([]string{"current_setting"}, nil), nil
		}
		return one([]string{"current_setting"}, s.cfg.Mode), nil
	case "exists":
		if !s.has(st.name) {
			if strings.HasSuffix(st.name, "locks") || strings.HasSuffix(st.name, "activity") || strings.HasSuffix(st.name, "database") {
				return fakesql.Response{}, pgErr(codeUndefinedTable, fmt.Sprintf("relation %q does not exist", st.name))
			}
			return fakesql.Response{}, pgErr(codeUndefinedFunction, fmt.Sprintf("function %s does not exist", st.name))
		}
		switch {
		case strings.HasPrefix(query, "SELECT count(*)"):
			return one([]string{"count"}, int64(0)), nil
		case strings.HasSuffix(st.name, "backend_pid"):
			return one([]string{st.name}, ss.pid), nil
		}
		return one([]string{st.name}, nil), nil // strict: NULL in, NULL out
	case "session.trylock":
		return one([]string{"ok"}, s.tryLock(ss.pid, arg(0).(int64))), nil
	case "session.unlock":
		return one([]string{"ok"}, s.unlock(ss.pid, arg(0).(int64))), nil
	case "session.holds":
		l := s.advisory[keyOf(arg(0), arg(1))]
		return one([]string{"exists"}, l != nil && l.holder == ss.pid), nil
	case "session.holder":
		if l := s.advisory[keyOf(arg(0), arg(1))]; l != nil {
			return one([]string{"pid"}, l.holder), nil
		}
		return none("pid"), nil
	case "session.terminate":
		victim := s.sessions[arg(0).(int64)]
		if victim == nil || victim.killed {
			return one([]string{"ok"}, false), nil
		}
		victim.killed = true
		fakesql.Kill(victim.fs)
		s.endLocked(victim.pid)
		return one([]string{"ok"}, true), nil
	case "session.guard":
		return one([]string{"set_config"}, args[1].Value), nil
	case "session.guard-all":
		cols, vals := make([]string, len(args)/2), make([]any, len(args)/2)
		for i := range cols {
			cols[i], vals[i] = "set_config", args[2*i+1].Value
		}
		return one(cols, vals...), nil
	case "session.alive":
		victim := s.sessions[arg(0).(int64)]
		return one([]string{"exists"}, victim != nil && !victim.killed), nil
	}
	return s.table(st, args)
}

// findByKey answers the lock administration's look-up of one advisory
// key in the server's lock view joined with its activity view (the
// statement of list.go, under this server's names): the granted holder's
// row, or none.
func (s *pgSim) findByKey(query string, args []driver.NamedValue) (fakesql.Response, bool) {
	view := s.named("pg_locks")
	if !strings.Contains(query, "FROM "+view+" l LEFT JOIN") || !strings.Contains(query, "l.classid::bigint = $1::bigint AND l.objid::bigint = $2::bigint") {
		return fakesql.Response{}, false
	}
	cols := []string{"classid", "objid", "objsubid", "granted", "pid", "usename", "client", "application_name", "backend_start", "now"}
	classid, objid := args[0].Value.(int64), args[1].Value.(int64)
	l := s.advisory[keyOf(classid, objid)]
	if l == nil {
		return none(cols...), true
	}
	now := s.now().UnixMilli()
	return one(cols, classid, objid, int64(1), true, l.holder, "app", "local", "", now, now), true
}

// blockingLock is pg_advisory_lock under lock_timeout (args: the timeout
// in ms as text, the key): it tries every few milliseconds without
// holding up other sessions, and fails with 55P03 when the time is up.
func (s *pgSim) blockingLock(fs *fakesql.Session, args []driver.NamedValue) (fakesql.Response, error) {
	ms, err := strconv.ParseInt(args[0].Value.(string), 10, 64)
	if err != nil {
		return fakesql.Response{}, pgErr(codeSyntaxError, "lock_timeout: "+err.Error())
	}
	deadline := time.Now().Add(time.Duration(ms) * time.Millisecond)
	for {
		s.mu.Lock()
		ss := s.session(fs)
		s.counts["session.lock"]++
		got := !ss.killed && s.tryLock(ss.pid, args[1].Value.(int64))
		s.mu.Unlock()
		if got {
			return one([]string{"pg_advisory_lock", "s"}, nil, args[0].Value), nil
		}
		if !time.Now().Before(deadline) {
			return fakesql.Response{}, pgErr(codeLockNotAvailable, "canceling statement due to lock timeout")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func keyOf(classid, objid any) int64 {
	return KeyFromParts(uint32(classid.(int64)), uint32(objid.(int64)))
}

func (s *pgSim) tryLock(pid, key int64) bool {
	if s.cfg.Stub {
		return true
	}
	l := s.advisory[key]
	switch {
	case l == nil:
		s.advisory[key] = &advLock{holder: pid, count: 1}
	case l.holder == pid:
		l.count++
	default:
		return false
	}
	return true
}

func (s *pgSim) unlock(pid, key int64) bool {
	if s.cfg.Stub {
		return true
	}
	l := s.advisory[key]
	if l != nil && s.cfg.BrokenUnlock {
		delete(s.advisory, key)
		return true
	}
	if l == nil || l.holder != pid {
		return false // WARNING: you don't own a lock of type ExclusiveLock
	}
	if l.count--; l.count == 0 {
		delete(s.advisory, key)
	}
	return true
}

// table answers a lease-table statement.
func (s *pgSim) table(st pgStmt, args []driver.NamedValue) (fakesql.Response, error) {
	op := strings.TrimPrefix(st.kind, "table.")
	tb := s.tables[st.table]
	switch op {
	case "create":
		if tb == nil {
			nameCap := (Builder{}).MaxNameRunes(st.schema)
			s.tables[st.table] = &pgTable{schema: st.schema, nameCap: nameCap, rows: map[string]*pgRow{}}
		}
		return fakesql.Response{}, nil
	case "drop":
		delete(s.tables, st.table)
		return fakesql.Response{}, nil
	}
	if tb == nil {
		return fakesql.Response{}, pgErr(codeUndefinedTable, fmt.Sprintf("relation %q does not exist", st.table))
	}
	v := map[string]any{}
	for i, a := range st.args {
		v[a] = args[i].Value
	}
	str := func(k string) string { x, _ := v[k].(string); return x }
	name := str("name")
	if utf8.RuneCountInString(name) > tb.nameCap {
		return fakesql.Response{}, pgErr("22001", fmt.Sprintf("value too long for type character varying(%d)", tb.nameCap))
	}
	if utf8.RuneCountInString(str("owner")) > ownerBytes {
		return fakesql.Response{}, pgErr("22001", "value too long for type character varying(255)")
	}
	switch op {
	case "acquire", "refresh", "release", "expire":
		// Every n-th write is aborted; the same write sent again passes,
		// so a client that retries gets through and one that does not
		// sees the error.
		id := fmt.Sprint(op, name, v["owner"])
		s.writes++
		if n := s.cfg.SerializationEvery; n > 0 && !s.retried[id] && s.writes%n == 0 {
			s.aborted++
			s.retried[id] = true
			return fakesql.Response{}, pgErr(codeSerializationFailure, "restart transaction: TransactionRetryWithProtoRefreshError: WriteTooOldError")
		}
		delete(s.retried, id)
	}
	now := s.now()
	hasToken := st.schema.TokenCol != ""
	row := tb.rows[name]
	ms := func(t time.Time) int64 { return t.UnixMilli() }
	switch op {
	case "acquire", "refresh", "release", "expire", "release-delete", "sweep", "delete", "refresh-batch":
		sql := st.sql
		if op == "acquire" && s.cfg.TakeOverLive {
			sql = withoutConflictWhere(sql)
		}
		return s.write(tb, op, sql, args, now)
	case "name-column":
		return one([]string{"width", "unit", "collation", "type"}, int64(tb.nameCap), dialects.NameUnitCharacters, "default (C)", fmt.Sprintf("character varying(%d)", tb.nameCap)), nil
	case "inspect":
		cols := []string{"owner", "token", "locked_at", "until", "now"}
		if row == nil {
			return none(cols...), nil
		}
		return one(cols, row.Owner, tokenOf(row, hasToken), ms(row.LockedAt), ms(row.Until), ms(now)), nil
	case "list":
		names := make([]string, 0, len(tb.rows))
		for n := range tb.rows {
			names = append(names, n)
		}
		sort.Strings(names)
		resp := fakesql.Response{Columns: []string{"name", "owner", "token", "locked_at", "until", "now"}}
		for _, n := range names {
			r := tb.rows[n]
			resp.Rows = append(resp.Rows, []any{n, r.Owner, tokenOf(r, hasToken), ms(r.LockedAt), ms(r.Until), ms(now)})
		}
		return resp, nil
	}
	return fakesql.Response{}, fmt.Errorf("pgSim: unhandled %s", st.kind)
}

func tokenOf(r *pgRow, hasToken bool) int64 {
	if hasToken {
		return r.Token
	}
	return 0
}

// write runs a lease-table write from its text through the shared lease
// model (dialects/internal/leasesim), on a database clock that reads now
// for the whole statement: the RETURNING row of each row it changed, or,
// for openGauss's acquire, the rows affected. Statements are atomic, as
// ON CONFLICT and ON DUPLICATE KEY UPDATE are: a new name is inserted at
// once.
func (s *pgSim) write(tb *pgTable, op, sql string, args []driver.NamedValue, now time.Time) (fakesql.Response, error) {
	lt := &leasesim.Table{Schema: tb.schema, Rows: tb.rows}
	env := leasesim.Env{
		Placeholder: leasesim.Bound(args),
		Func: func(name string, _ []any) (any, bool, error) {
			return now, name == "CLOCK_TIMESTAMP", nil
		},
	}
	res, err := lt.Exec(sql, env)
	if err != nil {
		s.unknown = append(s.unknown, sql+"\n("+err.Error()+")")
		return fakesql.Response{}, pgErr("42601", "syntax error")
	}
	rows := res.Rows
	if res.Insert != nil {
		if tb.schema.TokenCol == "" {
			res.Insert.Token = 0
		}
		tb.rows[res.Insert.Name] = res.Insert
		rows = append(rows, res.Insert)
	}
	if op == "acquire" && s.cfg.OpenGauss {
		return fakesql.Response{RowsAffected: res.Affected()}, nil
	}
	resp := fakesql.Response{Columns: []string{"token"}}
	for _, r := range rows {
		v, err := lt.Output(res, r, env)
		if err != nil {
			s.unknown = append(s.unknown, sql+"\n("+err.Error()+")")
			return fakesql.Response{}, pgErr("42601", "syntax error")
		}
		resp.Rows = append(resp.Rows, []any{v})
	}
	return resp, nil
}

// withoutConflictWhere is an acquire whose conflict branch has no WHERE:
// the server of the TakeOverLive mutation, which takes over a live lease.
func withoutConflictWhere(sql string) string {
	i := strings.LastIndex(sql, "\nWHERE ")
	if i < 0 {
		return sql
	}
	end := strings.Index(sql[i+1:], "\n")
	if end < 0 {
		return sql[:i]
	}
	return sql[:i] + sql[i+1+end:]
}

// assertUnderstood fails the test for every statement the simulator did
// not know.
func (s *pgSim) assertUnderstood(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, q := range s.unknown {
		t.Errorf("the simulator does not understand:\n%s", q)
	}
}

// count is how many statements of kind were answered.
func (s *pgSim) count(kind string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[kind]
}

// heldLocks is the number of advisory locks held now.
func (s *pgSim) heldLocks() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.advisory)
}

// abortedWrites is the number of 40001 answers.
func (s *pgSim) abortedWrites() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.aborted
}

// probeTable is a table of the SKIP LOCKED / NOWAIT probe: its rows and
// which session holds each FOR UPDATE.
type probeTable struct {
	rows   map[int64]bool
	locked map[int64]int64 // row id → pid
}

var (
	probeCreateRE = regexp.MustCompile(`^CREATE TABLE (schedlock_probe_[0-9a-f]+) \(id integer PRIMARY KEY\)$`)
	probeInsertRE = regexp.MustCompile(`^INSERT INTO (schedlock_probe_[0-9a-f]+) \(id\) VALUES \(1\)$`)
	probeLockRE   = regexp.MustCompile(`^SELECT id FROM (schedlock_probe_[0-9a-f]+) WHERE id = 1 FOR UPDATE( SKIP LOCKED| NOWAIT)?$`)
	probeDropRE   = regexp.MustCompile(`^DROP TABLE IF EXISTS (schedlock_probe_[0-9a-f]+)$`)
)

// roleSQL, memberSQL and listingSQL are the probe's reads of the role and
// of pg_locks (dialects/postgres/probe.go).
const (
	roleSQL = `SELECT current_user, COALESCE((SELECT rolsuper FROM pg_roles WHERE rolname = current_user), false),
current_schema(), has_schema_privilege(current_schema(), 'CREATE')`
	memberSQL  = "SELECT pg_has_role(current_user, $1, 'MEMBER')"
	listingSQL = `SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory'`
)

// probe answers the statements of DB.Probe: the role and its rights (a
// member of pg_signal_backend with CREATE on public; pg_roles exists where
// the pg_ catalog does), the isolation level, the lock-listing read, the
// clock, and the SKIP LOCKED / NOWAIT probe on real row locks. ok is false
// for any other statement.
func (s *pgSim) probe(ss *pgSession, query string, args []driver.NamedValue) (resp fakesql.Response, err error, ok bool) {
	pgCatalog := s.has("pg_locks")
	switch query {
	case roleSQL:
		if !pgCatalog {
			return resp, pgErr(codeUndefinedTable, `relation "pg_roles" does not exist`), true
		}
		return one([]string{"current_user", "rolsuper", "current_schema", "create"}, "app", false, "public", true), nil, true
	case memberSQL:
		if !pgCatalog {
			return resp, pgErr(codeUndefinedFunction, "function pg_has_role(name, unknown, unknown) does not exist"), true
		}
		return one([]string{"pg_has_role"}, args[0].Value == "pg_signal_backend"), nil, true
	case "SHOW transaction_isolation":
		level := s.cfg.Isolation
		if level == "" {
			level = "read committed"
		}
		return one([]string{"transaction_isolation"}, level), nil, true
	case s.named(listingSQL):
		return one([]string{"count"}, int64(len(s.advisory))), nil, true
	case "SELECT clock_timestamp()":
		return one([]string{"clock_timestamp"}, time.Now().Add(s.cfg.ClockOffset)), nil, true
	case "BEGIN":
		return resp, nil, true
	case "ROLLBACK":
		for _, t := range s.probes {
			for id, pid := range t.locked {
				if pid == ss.pid {
					delete(t.locked, id)
				}
			}
		}
		return resp, nil, true
	}
	if m := probeCreateRE.FindStringSubmatch(query); m != nil {
		s.probes[m[1]] = &probeTable{rows: map[int64]bool{}, locked: map[int64]int64{}}
		return resp, nil, true
	}
	if m := probeDropRE.FindStringSubmatch(query); m != nil {
		delete(s.probes, m[1])
		return resp, nil, true
	}
	if m := probeInsertRE.FindStringSubmatch(query); m != nil {
		t := s.probes[m[1]]
		if t == nil {
			return resp, pgErr(codeUndefinedTable, fmt.Sprintf("relation %q does not exist", m[1])), true
		}
		t.rows[1] = true
		return fakesql.Response{RowsAffected: 1}, nil, true
	}
	if m := probeLockRE.FindStringSubmatch(query); m != nil {
		t := s.probes[m[1]]
		if t == nil {
			return resp, pgErr(codeUndefinedTable, fmt.Sprintf("relation %q does not exist", m[1])), true
		}
		holder, locked := t.locked[1]
		switch {
		case !locked || holder == ss.pid:
			t.locked[1] = ss.pid
			return one([]string{"id"}, int64(1)), nil, true
		case m[2] == " SKIP LOCKED":
			return none("id"), nil, true
		case m[2] == " NOWAIT":
			return resp, pgErr(codeLockNotAvailable, fmt.Sprintf("could not obtain lock on row in relation %q", m[1])), true
		}
		// A plain FOR UPDATE would wait for the holder; the probe never
		// sends one from the second connection.
		return resp, fmt.Errorf("pgSim: a blocking FOR UPDATE from a second session"), true
	}
	return resp, nil, false
}
