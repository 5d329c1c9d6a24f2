package oracle

import (
	"database/sql/driver"
	"errors"
	"path/filepath"
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

type blockerRows struct{ bound string }

func (b *blockerRows) Close(*fakesql.Session) {}

func (b *blockerRows) Handle(_ *fakesql.Session, q string, args []driver.NamedValue) (fakesql.Response, error) {
	if !strings.Contains(q, "gv$locked_object") || len(args) != 1 || strings.Count(q, ":1") != 1 {
		return fakesql.Response{}, errors.New("unexpected statement")
	}
	b.bound = args[0].Value.(string)
	now := time.Date(2026, 12, 6, 1, 3, 0, 0, time.UTC).UnixMilli()
	cols := []string{"id", "username", "module", "machine", "since", "tx", "status", "sql", "holds", "tbl", "waiter", "now"}
	return fakesql.Response{Columns: cols, Rows: [][]any{
		{"131,4021,@1", "APP", "SQL Developer", "ws-17", now - 3600000, now - 60000, "INACTIVE", "SELECT * FROM SCHEDLOCK FOR UPDATE", "row locks in SCHEDLOCK", "SCHEDLOCK", nil, now},
		{"131,4021,@1", "APP", "SQL Developer", "ws-17", now - 3600000, now - 60000, "INACTIVE", "SELECT * FROM SCHEDLOCK FOR UPDATE", "", "", "140,77,@1", now},
	}}, nil
}

// Blockers binds the table names in upper case without their schema and
// reads one blocker per session, with the kill that ends it.
func TestBlockersScan(t *testing.T) {
	h := &blockerRows{}
	db, _ := fakesql.Open(h)
	defer db.Close()
	a := &LockAdmin{DB: db}
	got, err := a.Blockers(t.Context(), []string{"jobs.schedlock", "shedlock"})
	if err != nil {
		t.Fatal(err)
	}
	if h.bound != "SCHEDLOCK,SHEDLOCK" {
		t.Errorf("bound tables %q", h.bound)
	}
	if len(got) != 1 {
		t.Fatalf("blockers %+v, want one session", got)
	}
	b := got[0]
	if b.SessionID != "131,4021,@1" || b.Holds != "row locks in SCHEDLOCK" || b.Table != "SCHEDLOCK" || len(b.Waiters) != 1 || b.Waiters[0] != "140,77,@1" ||
		b.Terminate != "ALTER SYSTEM KILL SESSION '131,4021,@1' IMMEDIATE" || b.DBNow.Sub(b.TxStart) != time.Minute {
		t.Errorf("blocker read as %+v", b)
	}
}
