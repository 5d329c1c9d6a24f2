package fakesql

import (
	"context"
	"database/sql/driver"
	"errors"
	"sync"
	"testing"
	"time"
)

// waitSim is a named-lock server whose "WAIT" statement blocks until the
// lock is free, for up to the milliseconds in its second argument.
type waitSim struct {
	mu      sync.Mutex
	owner   map[string]int64
	changes Changes
}

func (w *waitSim) Handle(*Session, string, []driver.NamedValue) (Response, error) {
	return Response{}, errors.New("HandleContext answers every statement")
}

func (w *waitSim) HandleContext(ctx context.Context, s *Session, q string, args []driver.NamedValue) (Response, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	name, _ := args[0].Value.(string)
	switch q {
	case "WAIT":
		ms, _ := args[1].Value.(int64)
		ok, err := w.changes.Await(ctx, &w.mu, time.Duration(ms)*time.Millisecond, func() bool {
			if _, held := w.owner[name]; held {
				return false
			}
			w.owner[name] = s.ID
			return true
		})
		if err != nil {
			return Response{}, err
		}
		return Response{Columns: []string{"ok"}, Rows: [][]any{{ok}}}, nil
	case "RELEASE":
		if w.owner[name] == s.ID {
			delete(w.owner, name)
			w.changes.Notify()
		}
		return Response{RowsAffected: 1}, nil
	}
	return Response{}, errors.New("unknown statement")
}

func (w *waitSim) Close(s *Session) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for n, id := range w.owner {
		if id == s.ID {
			delete(w.owner, n)
		}
	}
	w.changes.Notify()
}

func TestAwaitBlocksUntilRelease(t *testing.T) {
	sim := &waitSim{owner: map[string]int64{}}
	db, log := Open(sim)
	defer db.Close()
	ctx := context.Background()
	holder, _ := db.Conn(ctx)
	waiter, _ := db.Conn(ctx)
	var ok bool
	if err := holder.QueryRowContext(ctx, "WAIT", "x", int64(0)).Scan(&ok); err != nil || !ok {
		t.Fatalf("holder: %v %v", err, ok)
	}
	got := make(chan error, 1)
	go func() {
		var ok bool
		err := waiter.QueryRowContext(ctx, "WAIT", "x", int64(time.Minute/time.Millisecond)).Scan(&ok)
		if err == nil && !ok {
			err = errors.New("refused")
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("the wait ended while the lock was held: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	if _, err := holder.ExecContext(ctx, "RELEASE", "x"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the wait did not end when the lock was released")
	}

	// Timeout: the lock stays taken.
	if err := holder.QueryRowContext(ctx, "WAIT", "x", int64(20)).Scan(&ok); err != nil || ok {
		t.Fatalf("a wait on a held lock: %v %v; want refused after the timeout", err, ok)
	}

	// Cancel: the statement ends with the context's error.
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(20*time.Millisecond, cancel)
	err := holder.QueryRowContext(cctx, "WAIT", "x", int64(time.Minute/time.Millisecond)).Scan(&ok)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled wait: %v; want context.Canceled", err)
	}
	if n := len(log.Statements()); n != 5 {
		t.Fatalf("logged %d statements, want 5", n)
	}
}

func TestPreparesAreLogged(t *testing.T) {
	sim := &waitSim{owner: map[string]int64{}}
	db, log := Open(sim)
	defer db.Close()
	ctx := context.Background()
	c, _ := db.Conn(ctx)
	defer c.Close()
	st, err := c.PrepareContext(ctx, "RELEASE")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := st.ExecContext(ctx, "x"); err != nil {
			t.Fatal(err)
		}
	}
	_ = st.Close()
	if p := log.Prepares(); len(p) != 1 || p[0].Query != "RELEASE" || p[0].Session == 0 {
		t.Fatalf("prepares %+v; want one RELEASE on a session", p)
	}
	if n := len(log.Statements()); n != 3 {
		t.Fatalf("logged %d statements, want 3 (one per execution)", n)
	}
	if _, err := c.ExecContext(ctx, "RELEASE", "x"); err != nil {
		t.Fatal(err)
	}
	calls := log.Calls()
	if len(calls) != 4 || !calls[0].Prepared || !calls[2].Prepared || calls[3].Prepared || calls[3].Session != calls[0].Session {
		t.Fatalf("calls %+v; want three prepared executions, then one direct, on one session", calls)
	}
}
