package locktable_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
	"github.com/schedlock/schedlock/dialects/sqlite"
	"github.com/schedlock/schedlock/internal/fakesql"
)

// errSerialization stands for a server's "aborted, send it again" error.
var errSerialization = errors.New("restart transaction: serialization failure (40001)")

// retryingBuilder is SQLite's SQL with a Retrier that retries
// errSerialization.
type retryingBuilder struct{ sqlite.Builder }

func (retryingBuilder) IsRetryable(err error) bool { return errors.Is(err, errSerialization) }

// flakyServer answers the acquire statement with errSerialization for its
// first failures sends, then with token 7; it answers the inspect statement
// the same way, with one row.
type flakyServer struct {
	failures int

	mu   sync.Mutex
	sent map[string]int
}

func (f *flakyServer) Handle(_ *fakesql.Session, query string, _ []driver.NamedValue) (fakesql.Response, error) {
	kind := "other"
	switch {
	case strings.HasPrefix(query, "INSERT"):
		kind = "acquire"
	case strings.HasPrefix(query, "SELECT"):
		kind = "inspect"
	}
	f.mu.Lock()
	f.sent[kind]++
	n := f.sent[kind]
	f.mu.Unlock()
	if n <= f.failures {
		return fakesql.Response{}, errSerialization
	}
	switch kind {
	case "acquire":
		return fakesql.Response{Columns: []string{"token"}, Rows: [][]any{{int64(7)}}}, nil
	case "inspect":
		ms := time.Now().UnixMilli()
		return fakesql.Response{Columns: []string{"owner", "token", "locked_at", "until", "now"},
			Rows: [][]any{{"A", int64(7), ms, ms + 60000, ms}}}, nil
	}
	return fakesql.Response{}, nil
}

func (f *flakyServer) Close(*fakesql.Session) {}

func (f *flakyServer) count(kind string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sent[kind]
}

func flakyLocker(t *testing.T, failures int, b locktable.Builder) (*locktable.Locker, *flakyServer) {
	t.Helper()
	srv := &flakyServer{failures: failures, sent: map[string]int{}}
	db, _ := fakesql.Open(srv)
	t.Cleanup(func() { _ = db.Close() })
	l, err := locktable.New(db, b, dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	return l, srv
}

func TestRetryableErrorsAreRetried(t *testing.T) {
	l, srv := flakyLocker(t, 2, retryingBuilder{})
	lease, err := l.Acquire(ctxT(t), "job", dialects.Options{Owner: "A", AtMost: time.Minute})
	if err != nil {
		t.Fatalf("acquire after two retryable failures: %v", err)
	}
	if tok, _ := lease.Token(); tok != 7 {
		t.Errorf("token = %d, want 7", tok)
	}
	if n := srv.count("acquire"); n != 3 {
		t.Errorf("the acquire statement was sent %d times, want 3 (two failures, then success)", n)
	}
	row := mustInspect(t, l, "job")
	if row.Owner != "A" || srv.count("inspect") != 3 {
		t.Errorf("inspect after two failures: row %+v, sent %d times; want owner A, 3 sends", row, srv.count("inspect"))
	}
}

func TestRetriesAreBounded(t *testing.T) {
	l, srv := flakyLocker(t, 100, retryingBuilder{})
	_, err := l.Acquire(ctxT(t), "job", dialects.Options{Owner: "A"})
	if !errors.Is(err, errSerialization) {
		t.Fatalf("error = %v, want the serialization failure", err)
	}
	if want := fmt.Sprintf("(still failing after %d tries)", locktable.MaxRetries+1); !strings.Contains(err.Error(), want) {
		t.Errorf("error = %q, want it to say %q", err, want)
	}
	if n := srv.count("acquire"); n != locktable.MaxRetries+1 {
		t.Errorf("the acquire statement was sent %d times, want %d", n, locktable.MaxRetries+1)
	}
}

func TestWithoutRetrierNothingIsRetried(t *testing.T) {
	l, srv := flakyLocker(t, 1, sqlite.Builder{})
	if _, err := l.Acquire(ctxT(t), "job", dialects.Options{Owner: "A"}); !errors.Is(err, errSerialization) {
		t.Fatalf("error = %v, want the serialization failure", err)
	}
	if n := srv.count("acquire"); n != 1 {
		t.Errorf("sent %d times, want 1: a builder without Retrier gets no retries", n)
	}
}

func TestRetriesStopWithTheContext(t *testing.T) {
	l, srv := flakyLocker(t, 100, retryingBuilder{})
	ctx, cancel := context.WithCancel(ctxT(t))
	cancel()
	if _, err := l.Acquire(ctx, "job", dialects.Options{Owner: "A"}); err == nil {
		t.Fatal("acquire on a cancelled context succeeded")
	}
	if n := srv.count("acquire"); n > 1 {
		t.Errorf("sent %d times after the context ended, want at most 1", n)
	}
}
