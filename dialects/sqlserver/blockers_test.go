package sqlserver

import (
	"database/sql/driver"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/internal/fakesql"
	"github.com/schedlock/schedlock/internal/golden"
)

// TestBlockersGolden keeps the blocker statement in testdata (it has not
// been run against a server; -update rewrites it).
func TestBlockersGolden(t *testing.T) {
	golden.Check(t, filepath.Join("testdata", "blockers.golden"), BlockerStatement()+"\n")
}

// blockerRows answers the blocker statement with rows a server would give
// for session 53 holding X on schedlock while 60 waits for it, and 55
// holding an X KEY lock in shedlock; it checks the one bound value.
type blockerRows struct{ bound string }

func (b *blockerRows) Close(*fakesql.Session) {}

func (b *blockerRows) Handle(_ *fakesql.Session, q string, args []driver.NamedValue) (fakesql.Response, error) {
	if !strings.Contains(q, "sys.dm_tran_locks") || len(args) != 1 || strings.Count(q, "@p1") != 1 {
		return fakesql.Response{}, errors.New("unexpected statement")
	}
	b.bound = args[0].Value.(string)
	login, tx, now := time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC).UnixMilli(), time.Date(2026, 12, 6, 1, 2, 0, 0, time.UTC).UnixMilli(), time.Date(2026, 12, 6, 1, 3, 0, 0, time.UTC).UnixMilli()
	cols := []string{"id", "login", "program", "client", "since", "tx", "status", "text", "holds", "tbl", "waiter", "now"}
	return fakesql.Response{Columns: cols, Rows: [][]any{
		{"53", "app", "SSMS", "10.0.0.5", login, tx, "sleeping", "BEGIN TRAN; SELECT * FROM schedlock WITH (TABLOCKX)", "X lock on schedlock", "schedlock", nil, now},
		{"53", "app", "SSMS", "10.0.0.5", login, tx, "sleeping", "BEGIN TRAN; SELECT * FROM schedlock WITH (TABLOCKX)", "", "schedlock", "60", now},
		{"55", "etl", "", "10.0.0.6", login, nil, "running", "UPDATE shedlock SET locked_by = 'x'", "X KEY lock in shedlock", "shedlock", nil, now},
	}}, nil
}

// Blockers reads the statement's columns into one blocker per session,
// with its waiters and the KILL that ends it.
func TestBlockersScan(t *testing.T) {
	h := &blockerRows{}
	db, _ := fakesql.Open(h)
	defer db.Close()
	a := &LockAdmin{db: db}
	got, err := a.Blockers(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if h.bound != "schedlock,shedlock,sys_sched_lock,DATABASECHANGELOGLOCK" {
		t.Errorf("bound tables %q", h.bound)
	}
	if len(got) != 2 {
		t.Fatalf("blockers %+v, want sessions 53 and 55", got)
	}
	b := got[0]
	if b.SessionID != "53" || b.User != "app" || b.Application != "SSMS" || b.Client != "10.0.0.5" || b.Holds != "X lock on schedlock" ||
		b.Table != "schedlock" || !reflect.DeepEqual(b.Waiters, []string{"60"}) || b.Terminate != "KILL 53" ||
		!b.TxStart.Equal(time.Date(2026, 12, 6, 1, 2, 0, 0, time.UTC)) || !b.Since.Equal(time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC)) {
		t.Errorf("session 53 read as %+v", b)
	}
	if b := got[1]; b.SessionID != "55" || b.Holds != "X KEY lock in shedlock" || !b.TxStart.IsZero() || len(b.Waiters) != 0 || b.Terminate != "KILL 55" {
		t.Errorf("session 55 read as %+v", b)
	}
}
