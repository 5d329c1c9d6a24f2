package postgres

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// A role at its CONNECTION LIMIT (SQLSTATE 53300, as for max_connections)
// gets a *dialects.ConnLimitError naming the limit from detection, the
// table locker and the session locker, at once and never a hang.
func TestConnLimitLive(t *testing.T) {
	admin := liveDB(t)
	role := unique("connlimit_")
	ctx := testCtx(t)
	if _, err := admin.ExecContext(ctx, "CREATE ROLE "+role+" LOGIN CONNECTION LIMIT 1"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = admin.ExecContext(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1", role)
		// DROP OWNED drops the role's table and revokes its grant first.
		if _, err := admin.ExecContext(ctx, "DROP OWNED BY "+role); err != nil {
			t.Errorf("drop what %s owns: %v", role, err)
		}
		if _, err := admin.ExecContext(ctx, "DROP ROLE "+role); err != nil {
			t.Errorf("drop role %s: %v", role, err)
		}
	})
	if _, err := admin.ExecContext(ctx, "GRANT CREATE ON SCHEMA public TO "+role); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(liveDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	openAsRole := func() *sql.DB {
		db, err := sql.Open(DriverName, u.String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		return db
	}
	wantLimit := func(what string, err error, start time.Time) {
		t.Helper()
		var limit *dialects.ConnLimitError
		if !errors.As(err, &limit) || !errors.Is(err, dialects.ErrConnLimit) {
			t.Fatalf("%s: got %v, want a ConnLimitError", what, err)
		}
		if limit.Limit != "rolconnlimit" || limit.Scope != "role "+role || !strings.Contains(err.Error(), "rolconnlimit") {
			t.Fatalf("%s: %+v (%v) does not name the role's limit", what, limit, err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Fatalf("%s: refused after %s, want at once", what, d)
		}
		t.Logf("%s: %v", what, err)
	}

	db := openAsRole()
	detected, err := New(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	tl, err := detected.TableLocker(dialects.Table{Name: unique("connlimit_")})
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tl.(dialects.TableDropper).DropTable(context.Background()) })
	sl, err := detected.SessionLocker()
	if err != nil {
		t.Fatal(err)
	}

	// The role's one connection is taken: every other one is refused.
	held, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()

	start := time.Now()
	_, err = New(ctx, openAsRole(), nil)
	wantLimit("detect", err, start)

	start = time.Now()
	_, err = tl.Acquire(ctx, unique("job_"), dialects.Options{})
	wantLimit("table acquire", err, start)

	start = time.Now()
	_, err = sl.Acquire(ctx, unique("job_"), dialects.Options{})
	wantLimit("session acquire", err, start)
}
