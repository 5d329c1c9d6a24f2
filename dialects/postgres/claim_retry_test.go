package postgres

import (
	"context"
	"database/sql/driver"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/claimtable"
	"github.com/schedlock/schedlock/internal/fakesql"
)

// abortOnce answers the first claim UPDATE as CockroachDB does under
// contention, with SQLSTATE 40001, and every later one with one claimed
// row.
type abortOnce struct{ updates atomic.Int32 }

func (a *abortOnce) Handle(_ *fakesql.Session, q string, args []driver.NamedValue) (fakesql.Response, error) {
	switch {
	case strings.HasPrefix(q, "SELECT id, version"):
		return fakesql.Response{Columns: []string{"id", "version"}, Rows: [][]any{{int64(1), int64(0)}}}, nil
	case strings.HasPrefix(q, "UPDATE"):
		if a.updates.Add(1) == 1 {
			return fakesql.Response{}, &pgconn.PgError{Code: codeSerializationFailure, Message: "restart transaction"}
		}
		return fakesql.Response{RowsAffected: 1}, nil
	}
	return fakesql.Response{Columns: make([]string, 9), Rows: [][]any{{int64(1), "t", []byte{}, int64(0), int64(0), int64(0), int64(3), int64(1), int64(0)}}}, nil
}

func (a *abortOnce) Close(*fakesql.Session) {}

// TestOptimisticClaimRetriesSerializationFailure: an optimistic claim on
// CockroachDB whose UPDATE is aborted with 40001 sends it again and claims
// the row.
func TestOptimisticClaimRetriesSerializationFailure(t *testing.T) {
	h := &abortOnce{}
	db, _ := fakesql.Open(h)
	defer db.Close()
	cl, err := claimtable.New(db, ClaimBuilder{}, claimtable.Table{}, dialects.ClaimOptimistic, claimtable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := cl.Claim(context.Background(), claimtable.Request{Owner: "w", Max: 1})
	if err != nil || len(tasks) != 1 {
		t.Fatalf("claim after a 40001: %d rows, %v; want the row", len(tasks), err)
	}
	if n := h.updates.Load(); n != 2 {
		t.Fatalf("%d UPDATEs sent; want the aborted one and its retry", n)
	}
}
