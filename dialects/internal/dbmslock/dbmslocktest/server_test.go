package dbmslocktest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects/internal/dbmslock"
)

// TestServerAnswers: the return codes of REQUEST, RELEASE and the Holds
// block for the holder and another session, a session's end freeing its
// locks, and a REQUEST that grants an owned lock again taking as many
// RELEASEs.
func TestServerAnswers(t *testing.T) {
	var mu sync.Mutex
	var s Server
	call := func(session int64, block string) int64 {
		t.Helper()
		rc, err := s.Call(context.Background(), &mu, session, block, "SCHEDLOCK$job", nil)
		if err != nil {
			t.Fatal(err)
		}
		return rc
	}
	for _, step := range []struct {
		session int64
		block   string
		want    int64
	}{
		{1, "trylock", dbmslock.LockSuccess},
		{1, "trylock", dbmslock.LockAlreadyOwned},
		{2, "trylock", dbmslock.LockTimeout},
		{1, "holds", dbmslock.LockAlreadyOwned},
		{2, "holds", dbmslock.LockTimeout},
		{2, "unlock", dbmslock.LockAlreadyOwned},
		{1, "unlock", dbmslock.LockSuccess},
		{1, "holds", dbmslock.LockSuccess}, // taken and given back
		{2, "trylock", dbmslock.LockSuccess},
	} {
		if got := call(step.session, step.block); got != step.want {
			t.Fatalf("session %d %s = %d, want %d", step.session, step.block, got, step.want)
		}
	}
	if session, held := s.Holder("SCHEDLOCK$job"); !held || session != 2 || s.Held() != 1 || s.HeldBy(2) != 1 {
		t.Fatalf("holder %d, %v; held %d; want session 2 holding the one lock", session, held, s.Held())
	}
	s.End(2)
	if _, held := s.Holder("SCHEDLOCK$job"); held || s.Held() != 0 {
		t.Fatal("the lock outlived its session")
	}

	s.ReRequestGrants = true
	call(3, "trylock")
	if got := call(3, "trylock"); got != dbmslock.LockSuccess {
		t.Fatalf("a re-REQUEST that grants again answered %d, want 0", got)
	}
	call(3, "unlock")
	if _, held := s.Holder("SCHEDLOCK$job"); !held {
		t.Fatal("one RELEASE freed a lock taken twice")
	}
	call(3, "unlock")
	if _, held := s.Holder("SCHEDLOCK$job"); held {
		t.Fatal("two RELEASEs did not free a lock taken twice")
	}
}

// TestServerWait: a waiting REQUEST is granted when the holder releases,
// times out with 1, rejects a timeout that is not whole seconds below
// MAXWAIT (which it does not count), and answers WaitCode when it is set.
func TestServerWait(t *testing.T) {
	var mu sync.Mutex
	var s Server
	lock := func(session int64, timeout any) (int64, error) {
		mu.Lock()
		defer mu.Unlock()
		return s.Call(context.Background(), &mu, session, "lock", "L", timeout)
	}
	if rc, err := lock(1, int64(1)); err != nil || rc != dbmslock.LockSuccess {
		t.Fatalf("a free lock: %d, %v", rc, err)
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		defer mu.Unlock()
		_, _ = s.Call(context.Background(), &mu, 1, "unlock", "L", nil)
	}()
	if rc, err := lock(2, int64(60)); err != nil || rc != dbmslock.LockSuccess {
		t.Fatalf("a wait through the holder's release: %d, %v", rc, err)
	}
	if rc, err := lock(3, int64(0)); err != nil || rc != dbmslock.LockTimeout {
		t.Fatalf("a wait of 0 s on a held lock: %d, %v", rc, err)
	}
	for _, bad := range []any{nil, 1.5, int64(-1), int64(dbmslock.MaxWait)} {
		if _, err := lock(3, bad); err == nil {
			t.Errorf("timeout %#v accepted", bad)
		}
	}
	code := int64(dbmslock.LockDeadlock)
	s.WaitCode = &code
	if rc, _ := lock(3, int64(1)); rc != code {
		t.Errorf("WaitCode: %d, want %d", rc, code)
	}
	if w := s.Waits(); len(w) != 4 || w[1] != 60 || w[3] != 1 {
		t.Errorf("waits %v", w)
	}
}
