package postgres

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// backendFor is a Backend on db (nil for none) for a database known only
// as info, of which detection proved facts (nil: nothing), made without
// detecting: what the code decides from an Info alone.
func backendFor(db *sql.DB, info dialects.Info, facts *serverFacts) *Backend {
	if info.Dialect == "" {
		info.Dialect = Name
	}
	b := &Backend{facts: facts}
	b.DB = sqlkit.New(db, info, nil, b)
	return b
}

// TestOpenLive: the registered Open connects with pgx, detects the server
// and returns the *Backend, the kit DB of which owns the pool.
func TestOpenLive(t *testing.T) {
	d, ok := dialects.Lookup(Name)
	if !ok || d.Open == nil {
		t.Fatal("the postgres dialect is not registered with an Open")
	}
	b, err := d.Open(testCtx(t), dialects.Target{Scheme: "postgres", Conn: liveDSN(t)})
	if err != nil {
		t.Fatal(err)
	}
	pg, ok := b.(*Backend)
	if !ok {
		t.Fatalf("Open returned %T, want *postgres.Backend", b)
	}
	if pg.Info.Dialect != Name || pg.Info.Product != dialects.ProductPostgreSQL {
		t.Errorf("Info = %+v; want PostgreSQL detected by the postgres dialect", pg.Info)
	}
	if db, ok := sqlkit.Of(b); !ok || db != pg.DB {
		t.Errorf("sqlkit.Of = %v, %v; want the backend's kit DB", db, ok)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := pg.SQL.PingContext(testCtx(t)); err == nil {
		t.Error("the pool answers after Close")
	}
}

// TestOpenUnreachable: a server that is not there is an UnreachableError.
func TestOpenUnreachable(t *testing.T) {
	_, err := Open(testCtx(t), dialects.Target{Scheme: "postgres", Conn: "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=5"})
	var unreachable *dialects.UnreachableError
	if !errors.As(err, &unreachable) {
		t.Fatalf("Open of a closed port = %v; want an UnreachableError", err)
	}
}

// pgAdmin is the LockAdmin of a PostgreSQL Backend on db.
func pgAdmin(db *sql.DB) dialects.LockAdmin {
	return backendFor(db, dialects.Info{Product: dialects.ProductPostgreSQL}, nil).LockAdmin()
}

// holderOf is the pid of the backend holding the session lock name on db,
// as the LockAdmin finds it (unlock's and locks ls's lookup); "" when the
// lock is free.
func holderOf(ctx context.Context, db *sql.DB, name string) (string, error) {
	e, found, err := pgAdmin(db).SessionLock(ctx, name)
	if err != nil || !found || e.Holder == nil {
		return "", err
	}
	return e.Holder.SessionID, nil
}

// killSession ends session id through the LockAdmin on db.
func killSession(ctx context.Context, db *sql.DB, id string) error {
	return pgAdmin(db).Kill(ctx, id)
}
