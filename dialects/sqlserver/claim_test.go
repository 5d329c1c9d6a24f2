package sqlserver

import (
	"context"
	"database/sql/driver"
	"errors"
	"strings"
	"testing"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/claimtable"
	"github.com/schedlock/schedlock/internal/fakesql"
)

// readPastRefuser answers the readpast claim as a session under SNAPSHOT
// isolation does: error 650.
type readPastRefuser struct{}

func (readPastRefuser) Handle(_ *fakesql.Session, q string, _ []driver.NamedValue) (fakesql.Response, error) {
	if strings.Contains(q, "READPAST") {
		return fakesql.Response{}, mssql.Error{Number: errReadPastIsolation, Message: "You can only specify the READPAST lock in the READ COMMITTED or REPEATABLE READ isolation levels."}
	}
	return fakesql.Response{}, nil
}

func (readPastRefuser) Close(*fakesql.Session) {}

// TestReadPastRefusedIsExplained: a READPAST claim the session's
// isolation refuses fails with ErrUnsupported and says what to do.
func TestReadPastRefusedIsExplained(t *testing.T) {
	db, _ := fakesql.Open(readPastRefuser{})
	defer db.Close()
	cl, err := claimtable.New(db, ClaimBuilder{}, claimtable.Table{}, dialects.ClaimReadPast, claimtable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = cl.Claim(context.Background(), claimtable.Request{Owner: "w", Max: 1})
	if !errors.Is(err, dialects.ErrUnsupported) || !strings.Contains(err.Error(), "optimistic") {
		t.Fatalf("claim under SNAPSHOT: %v; want ErrUnsupported naming the optimistic strategy", err)
	}
}

// TestClaimHintsFollowRCSI: READCOMMITTEDLOCK joins the hints exactly
// when the database runs READ_COMMITTED_SNAPSHOT.
func TestClaimHintsFollowRCSI(t *testing.T) {
	for _, rcsi := range []bool{false, true} {
		b, _ := claimtable.BuilderOf(newBackend(nil, Server{ReadCommittedSnapshot: rcsi}, nil))
		sql, _ := b.Single(dialects.ClaimReadPast, claimtable.SingleClaim{Table: "t", ID: "id", Where: "1 = 1", OrderBy: "id", Limit: "@p1", Returning: func(string) []string { return []string{"1"} }})
		if got := strings.Contains(sql, "READCOMMITTEDLOCK"); got != rcsi {
			t.Errorf("RCSI %v: READCOMMITTEDLOCK present %v:\n%s", rcsi, got, sql)
		}
	}
}
