package cmd

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects/postgres"
)

// pause --help says what each strategy does with a pause, and what it says
// of the session strategy holds: a PostgreSQL job run with --strategy
// session skips a lock paused (--create) in the lease table its DSN names.
func TestPauseHelpAndSessionStrategy(t *testing.T) {
	help := runCmd(t, false, nil, "pause", "--help")
	flat := strings.Join(strings.Fields(help.stdout), " ")
	for _, want := range []string{
		"table strategy finds the lock held by the pause and skips",
		"session strategy (advisory locks, GET_LOCK; the default on PostgreSQL and MySQL) reads the lock's row in the lease table first",
		"and skips a paused lock",
		"etcd, ZooKeeper cannot hold a pause",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("pause --help does not say %q:\n%s", want, help.stdout)
		}
	}
	if strings.Contains(flat, "do not see it") {
		t.Errorf("pause --help still says session jobs do not see a pause:\n%s", help.stdout)
	}

	u := livePostgresURL(t)
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	table := "pause_session_" + suffix
	q := u.Query()
	q.Set("x-table", table)
	u.RawQuery = q.Encode()
	withTable := u.String()
	defer func() {
		db, err := sql.Open(postgres.DriverName, livePostgresURL(t).String())
		if err == nil {
			_, _ = db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+table)
			_ = db.Close()
		}
	}()
	if r := runCmd(t, false, nil, "run", "--dsn", withTable, "--create-table", "--name", "warm-up", "--", "true"); r.err != nil {
		t.Fatalf("create the lease table: %v\n%s", r.err, r.stderr)
	}
	name := "paused-" + suffix
	if r := runCmd(t, false, nil, "pause", name, "--dsn", withTable, "--create", "--for", "1h", "--by", "oncall", "--yes"); r.err != nil {
		t.Fatalf("pause: %v\n%s", r.err, r.stderr)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	r := runCmd(t, false, nil, "run", "--dsn", withTable, "--strategy", "session", "--name", name, "--", "touch", marker)
	if r.err == nil || !strings.Contains(r.err.Error(), `lock "`+name+`" is paused by oncall until `) {
		t.Fatalf("session run of a paused lock: %v, want a skip naming the pause", r.err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the session-strategy job ran though paused")
	}
}
