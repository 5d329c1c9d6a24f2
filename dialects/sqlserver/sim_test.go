package sqlserver

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"hash/crc32"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/schedlock/schedlock/internal/fakesql"
)

// simServer simulates the SQL Server that this package talks to, for
// tests without a server: it understands the statements the dialect sends
// (parameters read by ordinal as go-mssqldb binds @p1, @p2, …) and answers
// as SQL Server does. The lease-table writes (MERGE, UPDATE … OUTPUT,
// DELETE … OUTPUT) run from their text through the shared lease model
// (dialects/internal/leasesim), so a statement whose condition means the
// opposite behaves the opposite here; the others are recognised by their
// text. It answers with the return codes of sp_getapplock and
// sp_releaseapplock, mssql.Error values with the server's error numbers
// and classes, the row shapes of sys.dm_tran_locks, and a database clock
// (the host clock plus an offset, rounded to the millisecond as CAST(… AS
// datetime2(3)) does). Session
// locks belong to a fakesql.Session and end with it; KILL ends a session.
// Comparisons of names follow SQL Server: trailing spaces are ignored, and
// a column without a binary collation ignores case.
//
// Its knobs switch on server conditions (a grant after waiting, missing
// permissions, Azure) so that tests can prove each is mapped right.
type simServer struct {
	mu sync.Mutex

	// Detection answers.
	banner         string
	engineEdition  int64
	productVersion string
	edition        string
	rcsi           bool
	clockOffset    time.Duration

	// Knobs.
	grantAfterWait bool  // sp_getapplock answers 1 (granted after waiting) instead of 0
	getAppLockCode *int  // sp_getapplock answers this code and grants nothing
	waitCode       *int  // sp_getapplock with a @LockTimeout above 0 answers this code and grants nothing
	noViewState    bool  // sys.dm_tran_locks is refused (error 300)
	noKill         bool  // KILL is refused (error 6102)
	dupKeyOnInsert int32 // 2627 or 2601: another writer inserts the name just before the MERGE's insert
	noCreateTable  bool  // HAS_PERMS_BY_NAME says no CREATE TABLE

	liquibase *liquibaseRow // DATABASECHANGELOGLOCK's row ID = 1; nil: no such table

	sessions map[int64]*simSession // by session_id
	applocks map[string]*appLock   // by resource (binary compared, at most 255 code units)
	changes  fakesql.Changes       // notified when an applock is freed
	waits    int                   // sp_getapplock calls with a @LockTimeout above 0
	tables   map[string]*simTable  // by lower-cased table name
	probes   map[string]*probeTable
}

type simSession struct {
	s       *fakesql.Session
	login   time.Time
	inTran  bool
	program string
}

type appLock struct {
	session int64
	count   int
}

func newSim() *simServer {
	return &simServer{
		banner:         "Microsoft SQL Server 2022 (RTM-CU12) (KB5033663) - 16.0.4115.5 (X64) \n\tMar  4 2024 08:56:10 \n\tCopyright (C) 2022 Microsoft Corporation\n\tDeveloper Edition (64-bit) on Linux (Ubuntu 22.04.4 LTS) <X64>",
		engineEdition:  3,
		productVersion: "16.0.4115.5",
		edition:        "Developer Edition (64-bit)",
		sessions:       map[int64]*simSession{},
		applocks:       map[string]*appLock{},
		tables:         map[string]*simTable{},
		probes:         map[string]*probeTable{},
	}
}

// open returns a *sql.DB whose connections are sessions of sim.
func (sim *simServer) open(t testing.TB) *sql.DB {
	t.Helper()
	db, _ := fakesql.Open(sim)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// detected opens sim and runs detection on it.
func (sim *simServer) detected(t testing.TB) *Backend {
	t.Helper()
	d, err := New(t.Context(), sim.open(t), nil)
	if err != nil {
		t.Fatalf("detect on the simulator: %v", err)
	}
	return d
}

// now is the database clock: SYSUTCDATETIME() cast to datetime2(3).
func (sim *simServer) now() time.Time {
	return time.Now().UTC().Add(sim.clockOffset).Round(time.Millisecond)
}

// spid is the session_id of a fakesql session (user sessions start above 50).
func spid(s *fakesql.Session) int64 { return 50 + s.ID }

// simError is the mssql.Error SQL Server sends for number.
func simError(number int32, class uint8, format string, args ...any) error {
	return mssql.Error{Number: number, Class: class, State: 1, Message: fmt.Sprintf(format, args...), ServerName: "sim"}
}

func scalar(v any) (fakesql.Response, error) {
	return fakesql.Response{Columns: []string{""}, Rows: [][]any{{v}}}, nil
}

// Close ends a session: the server frees its session-owned locks.
func (sim *simServer) Close(s *fakesql.Session) {
	sim.mu.Lock()
	defer sim.mu.Unlock()
	sim.endSessionLocked(spid(s))
}

func (sim *simServer) endSessionLocked(id int64) {
	for res, l := range sim.applocks {
		if l.session == id {
			delete(sim.applocks, res)
		}
	}
	sim.changes.Notify()
	for _, p := range sim.probes {
		if p.lockedBy == id {
			p.lockedBy = 0
		}
	}
	delete(sim.sessions, id)
}

var (
	getAppLockRE  = regexp.MustCompile(`EXEC @rc = sp_getapplock @Resource = @p1, @LockMode = '(\w+)', @LockOwner = '(\w+)', @LockTimeout = (-?\d+|@p2), @DbPrincipal = 'public';`)
	releaseRE     = regexp.MustCompile(`EXEC @rc = sp_releaseapplock @Resource = @p1, @LockOwner = '(\w+)', @DbPrincipal = 'public';`)
	releaseGuard  = "IF APPLOCK_MODE('public', @p1, 'Session') <> 'NoLock'"
	killRE        = regexp.MustCompile(`^KILL (\d+)$`)
	columnsRE     = regexp.MustCompile(`^SELECT \* FROM (\S+) WHERE 1 = 0$`)
	probeCreateRE = regexp.MustCompile(`^CREATE TABLE (schedlock_probe_\w+) \(id int PRIMARY KEY\)$`)
)

// HandleContext answers one statement; sp_getapplock with a
// @LockTimeout blocks until the lock is free, the timeout runs out or ctx
// ends (the driver's attention cancels the batch).
func (sim *simServer) HandleContext(ctx context.Context, s *fakesql.Session, q string, args []driver.NamedValue) (fakesql.Response, error) {
	if strings.Contains(q, "sp_getapplock") {
		sim.mu.Lock()
		id := spid(s)
		if _, ok := sim.sessions[id]; !ok {
			sim.sessions[id] = &simSession{s: s, login: sim.now(), program: "go-mssqldb"}
		}
		sim.mu.Unlock()
		return sim.getAppLock(ctx, id, q, args)
	}
	return sim.Handle(s, q, args)
}

// Handle answers one statement.
func (sim *simServer) Handle(s *fakesql.Session, q string, args []driver.NamedValue) (fakesql.Response, error) {
	sim.mu.Lock()
	id := spid(s)
	if _, ok := sim.sessions[id]; !ok {
		sim.sessions[id] = &simSession{s: s, login: sim.now(), program: "go-mssqldb"}
	}
	sim.mu.Unlock()

	switch {
	case q == detectSQL:
		return sim.detect()
	case strings.Contains(q, "sp_getapplock"):
		return sim.getAppLock(context.Background(), id, q, args)
	case strings.Contains(q, "sp_releaseapplock"):
		return sim.releaseAppLock(id, q, args)
	case q == holdsSQL:
		return sim.appLockMode(id, args)
	case q == lockTestSQL:
		return sim.appLockTest(id, args)
	case strings.Contains(q, "FROM sys.dm_tran_locks"):
		return sim.listLocks()
	case killRE.MatchString(q):
		n, _ := strconv.ParseInt(killRE.FindStringSubmatch(q)[1], 10, 64)
		return sim.kill(id, n)
	case q == principalsSQL:
		return fakesql.Response{Columns: []string{"", ""}, Rows: [][]any{{"app_login", "app_user"}}}, nil
	case q == rightsSQL || q == rightsAzureSQL:
		return sim.rights()
	case q == isolationSQL:
		return scalar(int64(2))
	case q == nowSQLText:
		return scalar(sim.now().Format("2006-01-02 15:04:05.0000000"))
	case q == "SELECT @@SPID":
		return scalar(id)
	case q == lockTablesSQL:
		return sim.lockTables()
	case isLiquibaseStatement(q):
		return sim.liquibaseStatement(q, args)
	case columnsRE.MatchString(q):
		return sim.columns(columnsRE.FindStringSubmatch(q)[1])
	case strings.HasPrefix(q, "IF OBJECT_ID(N'") && strings.Contains(q, "IS NULL\nCREATE TABLE "):
		return sim.createTable(q)
	case strings.HasPrefix(q, "IF OBJECT_ID(N'") && strings.Contains(q, "IS NOT NULL"):
		return sim.dropTable(q)
	case strings.HasPrefix(q, "MERGE INTO "):
		return sim.acquire(q, args)
	case strings.HasPrefix(q, "UPDATE "), strings.HasPrefix(q, "DELETE "):
		return sim.write(q, args)
	case strings.HasPrefix(q, "SELECT t."):
		return sim.selectRows(q, args)
	case nameColumnRE.MatchString(q):
		return sim.nameColumn(q)
	case probeCreateRE.MatchString(q) || strings.Contains(q, "schedlock_probe_") || q == "BEGIN TRANSACTION" || q == "ROLLBACK":
		return sim.probe(id, q)
	}
	return fakesql.Response{}, fmt.Errorf("simulator: unexpected statement %q", q)
}

func (sim *simServer) detect() (fakesql.Response, error) {
	sim.mu.Lock()
	defer sim.mu.Unlock()
	rcsi := int64(0)
	if sim.rcsi {
		rcsi = 1
	}
	return fakesql.Response{Columns: []string{"", "", "", "", ""}, Rows: [][]any{{sim.banner, sim.engineEdition, sim.productVersion, sim.edition, rcsi}}}, nil
}

func (sim *simServer) rights() (fakesql.Response, error) {
	sim.mu.Lock()
	defer sim.mu.Unlock()
	kill, create := int64(1), int64(1)
	if sim.noKill {
		kill = 0
	}
	if sim.noCreateTable {
		create = 0
	}
	return fakesql.Response{Columns: []string{"", "", "", "", "", ""}, Rows: [][]any{{"app_login", "app_user", "dbo", kill, create, int64(1)}}}, nil
}

// stringArg returns parameter @p<n> as a string.
func stringArg(args []driver.NamedValue, n int) (string, error) {
	if len(args) < n {
		return "", simError(201, 16, "Procedure or function expects parameter '@p%d', which was not supplied.", n)
	}
	s, ok := args[n-1].Value.(string)
	if !ok {
		return "", fmt.Errorf("simulator: @p%d is %T, want a string", n, args[n-1].Value)
	}
	return s, nil
}

// intArg returns parameter @p<n> as an int64.
func intArg(args []driver.NamedValue, n int) (int64, error) {
	if len(args) < n {
		return 0, simError(201, 16, "Procedure or function expects parameter '@p%d', which was not supplied.", n)
	}
	v, ok := args[n-1].Value.(int64)
	if !ok {
		return 0, fmt.Errorf("simulator: @p%d is %T, want an int64", n, args[n-1].Value)
	}
	return v, nil
}

// resourceKey is how the server identifies an applock resource: the
// nvarchar(255) @Resource, truncated, compared as binary.
func resourceKey(s string) string {
	u := utf16.Encode([]rune(s))
	if len(u) > AppLockResourceUnits {
		u = u[:AppLockResourceUnits]
	}
	return string(utf16.Decode(u))
}

func (sim *simServer) getAppLock(ctx context.Context, id int64, q string, args []driver.NamedValue) (fakesql.Response, error) {
	m := getAppLockRE.FindStringSubmatch(q)
	if m == nil || !strings.HasPrefix(q, "DECLARE @rc int;") || !strings.HasSuffix(q, "SELECT @rc;") {
		return fakesql.Response{}, fmt.Errorf("simulator: unexpected sp_getapplock batch %q", q)
	}
	if m[1] != "Exclusive" || m[2] != "Session" || (m[3] != "0" && m[3] != "@p2") {
		return fakesql.Response{}, fmt.Errorf("simulator: models only Exclusive session locks, got %v", m[1:])
	}
	resource, err := stringArg(args, 1)
	if err != nil {
		return fakesql.Response{}, err
	}
	var timeoutMs int64
	if m[3] == "@p2" {
		if timeoutMs, err = intArg(args, 2); err != nil {
			return fakesql.Response{}, err
		}
		if timeoutMs < 0 {
			return fakesql.Response{}, fmt.Errorf("simulator: @LockTimeout %d would wait forever", timeoutMs)
		}
	}
	key := resourceKey(resource)
	sim.mu.Lock()
	defer sim.mu.Unlock()
	if timeoutMs > 0 {
		sim.waits++
	}
	if sim.getAppLockCode != nil {
		return scalar(int64(*sim.getAppLockCode))
	}
	if sim.waitCode != nil && timeoutMs > 0 {
		return scalar(int64(*sim.waitCode))
	}
	granted := int64(0)
	if sim.grantAfterWait {
		granted = 1
	}
	take := func() bool {
		switch l := sim.applocks[key]; {
		case l == nil:
			sim.applocks[key] = &appLock{session: id, count: 1}
			return true
		case l.session == id:
			l.count++
			return true
		}
		return false
	}
	if take() {
		return scalar(granted)
	}
	if timeoutMs == 0 {
		return scalar(int64(-1))
	}
	ok, err := sim.changes.Await(ctx, &sim.mu, time.Duration(timeoutMs)*time.Millisecond, take)
	switch {
	case err != nil:
		return fakesql.Response{}, err
	case ok:
		return scalar(int64(1)) // granted after waiting
	}
	return scalar(int64(-1))
}

func (sim *simServer) releaseAppLock(id int64, q string, args []driver.NamedValue) (fakesql.Response, error) {
	m := releaseRE.FindStringSubmatch(q)
	if m == nil || m[1] != "Session" {
		return fakesql.Response{}, fmt.Errorf("simulator: unexpected sp_releaseapplock batch %q", q)
	}
	resource, err := stringArg(args, 1)
	if err != nil {
		return fakesql.Response{}, err
	}
	key := resourceKey(resource)
	sim.mu.Lock()
	defer sim.mu.Unlock()
	l := sim.applocks[key]
	if l == nil || l.session != id {
		if strings.Contains(q, releaseGuard) {
			return scalar(int64(notHeldCode))
		}
		// Unguarded, the server raises 1223 (and returns -999).
		return fakesql.Response{}, simError(errAppLockNotHeld, 16,
			"Cannot release the application lock (Database Principal: 'public', Resource: '%s') because it is not currently held.", resource)
	}
	if l.count--; l.count == 0 {
		delete(sim.applocks, key)
		sim.changes.Notify()
	}
	return scalar(int64(0))
}

func (sim *simServer) appLockMode(id int64, args []driver.NamedValue) (fakesql.Response, error) {
	resource, err := stringArg(args, 1)
	if err != nil {
		return fakesql.Response{}, err
	}
	sim.mu.Lock()
	defer sim.mu.Unlock()
	if l := sim.applocks[resourceKey(resource)]; l != nil && l.session == id {
		return scalar("Exclusive")
	}
	return scalar("NoLock")
}

func (sim *simServer) appLockTest(id int64, args []driver.NamedValue) (fakesql.Response, error) {
	resource, err := stringArg(args, 1)
	if err != nil {
		return fakesql.Response{}, err
	}
	sim.mu.Lock()
	defer sim.mu.Unlock()
	if l := sim.applocks[resourceKey(resource)]; l != nil && l.session != id {
		return scalar(int64(0))
	}
	return scalar(int64(1))
}

// listLocks answers listSQL: one row per application lock, with
// resource_description as servers print it ("0:[name]:(hash)", the name
// cut to 32 characters, the column padded with spaces).
func (sim *simServer) listLocks() (fakesql.Response, error) {
	sim.mu.Lock()
	defer sim.mu.Unlock()
	if sim.noViewState {
		return fakesql.Response{}, simError(errViewStateDenied, 14, "VIEW SERVER STATE permission was denied on object 'server', database 'master'.")
	}
	cols := []string{"request_session_id", "request_mode", "request_status", "request_owner_type", "resource_description",
		"login_name", "client", "program_name", "login_ms", "now_ms"}
	resp := fakesql.Response{Columns: cols}
	now := sim.now().UnixMilli()
	for res, l := range sim.applocks {
		u := utf16.Encode([]rune(res))
		if len(u) > ListableNameUnits {
			u = u[:ListableNameUnits]
		}
		desc := fmt.Sprintf("0:[%s]:(%08x)", string(utf16.Decode(u)), crc32.ChecksumIEEE([]byte(res)))
		desc += strings.Repeat(" ", max(0, 60-len(desc)))
		sess := sim.sessions[l.session]
		var login any
		if sess != nil {
			login = sess.login.UnixMilli()
		}
		resp.Rows = append(resp.Rows, []any{l.session, "X", "GRANT", "SESSION", desc, "app_login", "10.0.0.7", "go-mssqldb", login, now})
	}
	return resp, nil
}

func (sim *simServer) kill(id, victim int64) (fakesql.Response, error) {
	sim.mu.Lock()
	defer sim.mu.Unlock()
	switch {
	case sim.noKill:
		return fakesql.Response{}, simError(errKillDenied, 14, "User does not have permission to use the KILL statement.")
	case victim == id:
		return fakesql.Response{}, simError(errKillOwnSession, 16, "Cannot use KILL to kill your own process.")
	case victim <= 50:
		return fakesql.Response{}, simError(errKillSystemSession, 14, "Only user processes can be killed.")
	}
	sess, ok := sim.sessions[victim]
	if !ok {
		return fakesql.Response{}, simError(errNoSuchSession, 16, "Process ID %d is not an active process ID.", victim)
	}
	fakesql.Kill(sess.s)
	sim.endSessionLocked(victim)
	return fakesql.Response{}, nil
}
