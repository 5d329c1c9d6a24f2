package checks

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// fakeServer is an in-memory "database" for the checks' unit tests: it
// keeps session locks per connection (freed when the connection closes,
// like a real server) and lease tables. Its faults switch on deliberate
// bugs, so tests can prove the suite fails on a broken dialect.
type fakeServer struct {
	faults faults

	mu       sync.Mutex
	nextConn int
	conns    map[int]*fakeConn
	sessions map[string]int                 // lock key → holding connection id
	tables   map[string]map[string]*fakeRow // table → lock key → row
	frozen   time.Time                      // the clock when faults.frozenClock
}

// faults are the bugs a fakeServer can have.
type faults struct {
	grantTwice     bool          // acquire never refuses (table and session)
	anyOwner       bool          // release/refresh ignore the owner; unlock works from any connection
	flatToken      bool          // the token never grows
	ignoreAtLeast  bool          // release frees at once
	frozenClock    bool          // the database clock stands still
	skew           time.Duration // database clock minus host clock
	likeNames      bool          // '%' and '_' are the same character in names
	truncateNames  int           // names are cut to this many runes (0: never)
	silentLoss     bool          // Done never closes unless a call finds the loss
	noHolder       bool          // HeldError names nobody
	killPrivilege  bool          // Kill fails with a PrivilegeError
	noDrop         bool          // the table locker cannot drop tables
	noSession      bool          // the database has no session locks
	refreshNoMove  bool          // refresh leaves lock-until where it was
	releaseAnyName bool          // release frees every lock of the table
	cutAtNUL       bool          // table names are not checked and end at a NUL byte, as in C strings
}

func newFakeServer(f faults) *fakeServer {
	return &fakeServer{
		faults:   f,
		conns:    map[int]*fakeConn{},
		sessions: map[string]int{},
		tables:   map[string]map[string]*fakeRow{},
		frozen:   time.Now(),
	}
}

// now is the database clock.
func (s *fakeServer) now() time.Time {
	if s.faults.frozenClock {
		return s.frozen
	}
	return time.Now().Add(s.faults.skew).UTC().Truncate(time.Millisecond)
}

// key is how the server compares names.
func (s *fakeServer) key(name string) string {
	if s.faults.likeNames {
		b := []rune(name)
		for i, r := range b {
			if r == '%' {
				b[i] = '_'
			}
		}
		name = string(b)
	}
	if n := s.faults.truncateNames; n > 0 {
		if r := []rune(name); len(r) > n {
			name = string(r[:n])
		}
	}
	return name
}

// fakeDriver opens connections to one fakeServer.
type fakeDriver struct{ server *fakeServer }

func (d *fakeDriver) Open(string) (driver.Conn, error) { return d.Connect(context.Background()) }

// Connect implements driver.Connector.
func (d *fakeDriver) Connect(context.Context) (driver.Conn, error) {
	s := d.server
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextConn++
	c := &fakeConn{server: s, id: s.nextConn}
	s.conns[c.id] = c
	return c, nil
}

// Driver implements driver.Connector.
func (d *fakeDriver) Driver() driver.Driver { return d }

// fakeConn is one session. It runs no statements: the fake SessionOps
// reach it through (*sql.Conn).Raw.
type fakeConn struct {
	server *fakeServer
	id     int
	killed bool // guarded by server.mu
}

func (c *fakeConn) Prepare(string) (driver.Stmt, error) {
	return nil, errors.New("the fake database runs no SQL")
}
func (c *fakeConn) Begin() (driver.Tx, error) {
	return nil, errors.New("the fake database has no transactions")
}

// Close ends the session and frees its locks, as a server does at
// disconnect.
func (c *fakeConn) Close() error {
	s := c.server
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropSessionLocked(c.id)
	return nil
}

func (s *fakeServer) dropSessionLocked(id int) {
	for k, holder := range s.sessions {
		if holder == id {
			delete(s.sessions, k)
		}
	}
	delete(s.conns, id)
}

// Ping implements driver.Pinger: a killed session does not answer.
func (c *fakeConn) Ping(context.Context) error {
	if !c.IsValid() {
		return driver.ErrBadConn
	}
	return nil
}

// IsValid implements driver.Validator: killed sessions leave the pool.
func (c *fakeConn) IsValid() bool {
	c.server.mu.Lock()
	defer c.server.mu.Unlock()
	return !c.killed
}

// ResetSession implements driver.SessionResetter.
func (c *fakeConn) ResetSession(context.Context) error {
	if !c.IsValid() {
		return driver.ErrBadConn
	}
	return nil
}

// connOf returns the fakeConn behind conn.
func connOf(conn *sql.Conn) (*fakeConn, error) {
	var fc *fakeConn
	err := conn.Raw(func(dc any) error {
		c, ok := dc.(*fakeConn)
		if !ok {
			return fmt.Errorf("not a fake connection: %T", dc)
		}
		fc = c
		return nil
	})
	return fc, err
}

// serverOf returns the fakeServer behind db.
func serverOf(db *sql.DB) *fakeServer { return db.Driver().(*fakeDriver).server }

// fakeOps is the fake database's SessionOps, with the holder lookup and kill that fakeAdmin uses.
type fakeOps struct{}

func (fakeOps) session(conn *sql.Conn) (*fakeConn, *fakeServer, error) {
	fc, err := connOf(conn)
	if err != nil {
		return nil, nil, err
	}
	fc.server.mu.Lock()
	if fc.killed {
		fc.server.mu.Unlock()
		return nil, nil, driver.ErrBadConn
	}
	return fc, fc.server, nil // server.mu stays locked for the caller
}

// Lock waits on the fake server: it tries every millisecond until wait
// has passed, as a server-side wait hands a released lock over at once.
func (o fakeOps) Lock(ctx context.Context, conn *sql.Conn, name string, wait time.Duration) (bool, error) {
	deadline := time.Now().Add(wait)
	for {
		got, err := o.TryLock(ctx, conn, name)
		if err != nil || got || !time.Now().Before(deadline) {
			return got, err
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}

func (o fakeOps) TryLock(_ context.Context, conn *sql.Conn, name string) (bool, error) {
	fc, s, err := o.session(conn)
	if err != nil {
		return false, err
	}
	defer s.mu.Unlock()
	k := s.key(name)
	if holder, held := s.sessions[k]; held && holder != fc.id && !s.faults.grantTwice {
		return false, nil
	}
	s.sessions[k] = fc.id
	return true, nil
}

func (o fakeOps) Unlock(_ context.Context, conn *sql.Conn, name string) (bool, error) {
	fc, s, err := o.session(conn)
	if err != nil {
		return false, err
	}
	defer s.mu.Unlock()
	k := s.key(name)
	holder, held := s.sessions[k]
	if held && (holder == fc.id || s.faults.anyOwner) {
		delete(s.sessions, k)
		return true, nil
	}
	return false, nil
}

func (o fakeOps) Holds(_ context.Context, conn *sql.Conn, name string) (bool, error) {
	fc, s, err := o.session(conn)
	if err != nil {
		return false, err
	}
	defer s.mu.Unlock()
	holder, held := s.sessions[s.key(name)]
	return held && holder == fc.id, nil
}

func (fakeOps) Holder(_ context.Context, db *sql.DB, name string) (string, error) {
	s := serverOf(db)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.faults.noHolder {
		return "", nil
	}
	if holder, held := s.sessions[s.key(name)]; held {
		return fmt.Sprint(holder), nil
	}
	return "", nil
}

func (fakeOps) Kill(_ context.Context, db *sql.DB, sessionID string) error {
	s := serverOf(db)
	if s.faults.killPrivilege {
		return &dialects.PrivilegeError{Privilege: "KILL", Grant: "GRANT KILL TO app", Err: errors.New("permission denied")}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, c := range s.conns {
		if fmt.Sprint(id) == sessionID {
			c.killed = true
			s.dropSessionLocked(id)
			return nil
		}
	}
	return fmt.Errorf("no session %s", sessionID)
}

// fakeDialect is registered once; everything its backend does depends on
// the fakeServer behind the *sql.DB it is given.
var fakeDialect = &dialects.Dialect{
	Name:    "fake",
	Schemes: []dialects.Scheme{{Name: "fake"}},
	Open: func(context.Context, dialects.Target) (dialects.Backend, error) {
		return nil, errors.New("fakedb opens only through openFake")
	},
}

func init() { dialects.Register(fakeDialect) }

// fakeBackend is the fake database's backend: the kit's DB and an engine
// whose every answer comes from the fakeServer.
type fakeBackend struct{ *sqlkit.DB }

func (b *fakeBackend) RecommendStrategy() (dialects.Strategy, string) {
	return dialects.StrategySession, "fakedb has session locks"
}

func (b *fakeBackend) NewSessionLocker(dialects.SessionNames) (dialects.Locker, error) {
	if serverOf(b.SQL).faults.noSession {
		return nil, fmt.Errorf("%w: fakedb has no session locks", dialects.ErrUnsupported)
	}
	return &sqlkit.SessionLocker{Dialect: "fake", DB: b.SQL, Ops: fakeOps{}, CheckEvery: 200 * time.Millisecond}, nil
}

func (b *fakeBackend) NewLockAdmin(dialects.SessionNames) dialects.LockAdmin { return fakeAdmin{b.SQL} }

func (b *fakeBackend) ProbeDialect(context.Context, dialects.ProbeOptions) (dialects.Capabilities, error) {
	return dialects.Capabilities{
		SkipLocked:   dialects.CapYes("fakedb skips locked rows"),
		NoWait:       dialects.CapYes("fakedb fails at once on a locked row"),
		Isolation:    dialects.CapYes("read committed"),
		LockListing:  dialects.CapYes("fakedb lists its locks"),
		KillSessions: dialects.CapYes("fakedb lets anyone kill"),
	}, nil
}

func (b *fakeBackend) NewTableLocker(t dialects.Table) (dialects.TableLocker, error) {
	schema, err := t.Schema()
	if err != nil {
		return nil, err
	}
	s := serverOf(b.SQL)
	l := &fakeTable{server: s, schema: schema}
	if s.faults.noDrop {
		return undroppable{l}, nil
	}
	return l, nil
}

// fakeAdmin finds a session lock's holder and kills it through fakeOps.
type fakeAdmin struct{ db *sql.DB }

func (fakeAdmin) LockTables(context.Context) ([]dialects.Table, error) { return nil, nil }

func (fakeAdmin) SessionLocks(context.Context, []string) ([]dialects.LockEntry, error) {
	return nil, nil
}

func (a fakeAdmin) SessionLock(ctx context.Context, name string) (dialects.LockEntry, bool, error) {
	holder, err := fakeOps{}.Holder(ctx, a.db, name)
	if err != nil || holder == "" {
		return dialects.LockEntry{}, false, err
	}
	return dialects.LockEntry{Name: name, State: dialects.StateHeld, Strategy: dialects.StrategySession,
		Holder: &dialects.Holder{SessionID: holder}}, true, nil
}

func (a fakeAdmin) Kill(ctx context.Context, sessionID string) error {
	return fakeOps{}.Kill(ctx, a.db, sessionID)
}

// undroppable hides DropTable.
type undroppable struct{ dialects.TableLocker }

// openFake returns a detected fake database with the given faults.
func openFake(f faults) (*fakeBackend, *fakeServer) {
	s := newFakeServer(f)
	db := sql.OpenDB(&fakeDriver{server: s})
	b := &fakeBackend{}
	b.DB = sqlkit.New(db, dialects.Info{Dialect: "fake", Product: "fakedb", Version: "1.0", Banner: "fakedb 1.0"}, nil, b)
	return b, s
}
