package postgres

import (
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
)

// TestSerializationRetryLive makes the live PostgreSQL server abort a
// lease-table refresh with a real SQLSTATE 40001 — the engine's session
// runs SERIALIZABLE, and another transaction updates the row and commits
// while the refresh waits for it — and proves the engine sends the
// statement again and succeeds, while a builder without the retry fails
// with the 40001.
func TestSerializationRetryLive(t *testing.T) {
	for _, retry := range []bool{true, false} {
		raw, err := sql.Open(DriverName, liveDSNWith(t, map[string]string{"default_transaction_isolation": "serializable"}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = raw.Close() })
		var b locktable.Builder = Builder{}
		if !retry {
			b = noRetry{Builder{}}
		}
		table := unique("schedlock_retry_")
		l, err := locktable.New(raw, b, dialects.Table{Name: table})
		if err != nil {
			t.Fatal(err)
		}
		ctx := testCtx(t)
		if err := l.CreateTable(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = l.DropTable(testCtx(t)) })
		lease, err := l.Acquire(ctx, "job", dialects.Options{Owner: "A", AtMost: time.Minute})
		if err != nil {
			t.Fatal(err)
		}

		monitor := liveDB(t)
		admin := conn(t, monitor)
		adminPID := backendPID(t, admin)
		if _, err := admin.ExecContext(ctx, "BEGIN"); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.ExecContext(ctx, "UPDATE "+table+" SET lock_until = lock_until WHERE name = 'job'"); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		before := l.Stats()
		go func() { done <- lease.Refresh(ctx) }()
		waitBlockedBy(t, monitor, adminPID, done) // the refresh now waits for the row
		if _, err := admin.ExecContext(ctx, "COMMIT"); err != nil {
			t.Fatal(err)
		}
		err = <-done
		sent := l.Stats().Sub(before).Refresh
		switch {
		case retry && (err != nil || sent != 2):
			t.Errorf("with the retry: refresh = %v after %d sends; want success after 2 (one 40001)", err, sent)
		case !retry && !hasCode(err, codeSerializationFailure):
			t.Errorf("without the retry: refresh = %v; want SQLSTATE 40001 (so the server really aborted it)", err)
		}
		if retry {
			if err := lease.Release(ctx); err != nil && !errors.Is(err, dialects.ErrLeaseLost) {
				t.Errorf("release: %v", err)
			}
		}
	}
}

// waitBlockedBy waits until some backend waits for a lock that backend pid
// holds. A receive on done first (what waits ended without waiting) fails
// the test.
func waitBlockedBy(t *testing.T, db *sql.DB, pid int64, done <-chan error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var blocked int
		if err := db.QueryRowContext(testCtx(t), "SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))", pid).Scan(&blocked); err != nil {
			t.Fatalf("pg_blocking_pids: %v", err)
		}
		if blocked > 0 {
			return
		}
		select {
		case err := <-done:
			t.Fatalf("the refresh ended (%v) without waiting for the row backend %d holds", err, pid)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no backend waited for backend %d's row lock within 30s", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
