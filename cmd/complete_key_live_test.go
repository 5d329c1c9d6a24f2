package cmd

import (
	"context"
	"database/sql"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects/postgres"
)

// unlock --key completes with the keys of the session locks held now, and
// not with a key that was released.
func TestUnlockKeyCompletion(t *testing.T) {
	raw := livePostgresURL(t).String()
	db, err := sql.Open(postgres.DriverName, raw)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	held := time.Now().UnixNano()
	released := held + 1
	for _, k := range []int64{held, released} {
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", k); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_unlock($1)", released); err != nil {
		t.Fatal(err)
	}
	prefix := strconv.FormatInt(held, 10)[:12] // shared by both keys
	got, _ := complete(t, "unlock", "--dsn", raw, "--key", prefix)
	if !slices.Contains(got, strconv.FormatInt(held, 10)) {
		t.Errorf("--key %s offers %q, want the held key %d", prefix, got, held)
	}
	if slices.Contains(got, strconv.FormatInt(released, 10)) {
		t.Errorf("--key %s offers the released key %d", prefix, released)
	}
}
