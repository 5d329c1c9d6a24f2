package fakesql

import (
	"context"
	"database/sql/driver"
	"errors"
	"strings"
	"sync"
	"testing"
)

// lockSim is a tiny named-lock server: one holder per name, freed when the
// holder's session closes.
type lockSim struct {
	mu    sync.Mutex
	owner map[string]int64
}

func (l *lockSim) Handle(s *Session, q string, args []driver.NamedValue) (Response, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	name, _ := args[0].Value.(string)
	switch {
	case strings.HasPrefix(q, "LOCK"):
		if holder, ok := l.owner[name]; ok && holder != s.ID {
			return Response{Columns: []string{"ok"}, Rows: [][]any{{int64(0)}}}, nil
		}
		l.owner[name] = s.ID
		return Response{Columns: []string{"ok"}, Rows: [][]any{{int64(1)}}}, nil
	case strings.HasPrefix(q, "KILL"):
		return Response{}, nil
	}
	return Response{}, errors.New("unknown statement")
}

func (l *lockSim) Close(s *Session) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for n, id := range l.owner {
		if id == s.ID {
			delete(l.owner, n)
		}
	}
}

func TestSessionsAreConnections(t *testing.T) {
	sim := &lockSim{owner: map[string]int64{}}
	db, log := Open(sim)
	defer db.Close()
	ctx := context.Background()
	a, _ := db.Conn(ctx)
	b, _ := db.Conn(ctx)
	var got int64
	if err := a.QueryRowContext(ctx, "LOCK ?", "x").Scan(&got); err != nil || got != 1 {
		t.Fatalf("a: %v %d", err, got)
	}
	if err := b.QueryRowContext(ctx, "LOCK ?", "x").Scan(&got); err != nil || got != 0 {
		t.Fatalf("b must be refused: %v %d", err, got)
	}
	if err := a.Raw(func(any) error { return driver.ErrBadConn }); err == nil {
		t.Fatal("Raw should report the error")
	}
	_ = a.Close()
	if err := b.QueryRowContext(ctx, "LOCK ?", "x").Scan(&got); err != nil || got != 1 {
		t.Fatalf("after a's session closed, b must get the lock: %v %d", err, got)
	}
	if n := len(log.Statements()); n != 3 {
		t.Fatalf("logged %d statements, want 3", n)
	}
}
