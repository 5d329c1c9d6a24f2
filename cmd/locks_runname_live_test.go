//go:build unix

package cmd

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects/postgres"
)

// A session lock of `schedlock run` on PostgreSQL is listed under its
// name, read back from the holder's application name and checked against
// the advisory key; a session that only calls itself `schedlock run NAME`
// while it holds another key names nothing.
func TestLocksLsNamesSessionLocksOfRun(t *testing.T) {
	raw := livePostgresURL(t).String()
	for _, ns := range []string{"", "staging"} {
		t.Run("namespace="+ns, func(t *testing.T) {
			name := "runname-" + strconv.FormatInt(time.Now().UnixNano(), 36)
			stored := name
			if ns != "" {
				stored = ns + "::" + name
			}
			// An impostor: application name "schedlock run NAME", but a
			// lock on another key.
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
			impostorKey := postgres.Key(stored) ^ 1
			if _, err := conn.ExecContext(ctx, "SET application_name = 'schedlock run "+stored+"'"); err != nil {
				t.Fatal(err)
			}
			if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", impostorKey); err != nil {
				t.Fatal(err)
			}

			dir := t.TempDir()
			started, finish := filepath.Join(dir, "started"), filepath.Join(dir, "finish")
			args := []string{"run", "--dsn", raw, "--strategy", "session", "--name", name}
			if ns != "" {
				args = append(args, "--namespace", ns)
			}
			args = append(args, "--", "sh", "-c", `touch "$0"; while [ ! -e "$1" ]; do sleep 0.05; done`, started, finish)
			done := make(chan result, 1)
			go func() { done <- runCmd(t, false, nil, args...) }()
			defer func() {
				_ = os.WriteFile(finish, nil, 0o644)
				if r := <-done; r.err != nil {
					t.Errorf("run: %v\n%s", r.err, r.stderr)
				}
			}()
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				if _, err := os.Stat(started); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the command did not start within 30s")
				}
			}

			r := runCmd(t, false, nil, "locks", "ls", "--dsn", raw, "--strategy", "session", "-o", "json")
			if r.err != nil {
				t.Fatalf("locks ls: %v\n%s", r.err, r.stderr)
			}
			var locks []lockView
			if err := json.Unmarshal([]byte(r.stdout), &locks); err != nil {
				t.Fatalf("%v\n%s", err, r.stdout)
			}
			byKey := map[string]lockView{}
			for _, l := range locks {
				byKey[str(l.Key)] = l
			}
			held, ok := byKey[strconv.FormatInt(postgres.Key(stored), 10)]
			switch {
			case !ok:
				t.Fatalf("run's lock not listed:\n%s", r.stdout)
			case str(held.Name) != name || str(held.Namespace) != ns:
				t.Errorf("run's lock: name %q namespace %q, want %q %q", str(held.Name), str(held.Namespace), name, ns)
			case str(held.Holder.Application) != "schedlock run "+stored:
				t.Errorf("run's lock: application %q", str(held.Holder.Application))
			}
			impostor, ok := byKey[strconv.FormatInt(impostorKey, 10)]
			switch {
			case !ok:
				t.Fatalf("the impostor's lock not listed:\n%s", r.stdout)
			case impostor.Name != nil:
				t.Errorf("the impostor's lock is named %q; its key is not that name's", *impostor.Name)
			}
		})
	}
}
