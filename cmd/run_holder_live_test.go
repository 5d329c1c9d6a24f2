//go:build unix

package cmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/dsn"
)

// A run skipped because a session lock is held names the holder as `locks
// ls` does: the session, its user and client, its application and since
// when — not a bare backend id.
func TestRunSkipNamesTheHoldingSession(t *testing.T) {
	for _, s := range liveServers(t) {
		t.Run(s.name, func(t *testing.T) {
			name := "skip-holder-" + strconv.FormatInt(time.Now().UnixNano(), 36)
			d, err := dsn.Parse(s.dsn)
			if err != nil {
				t.Fatal(err)
			}
			d.NameConnections("holder-app")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			db, err := d.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			locker, err := db.Locker(dialects.StrategySession, dialects.Table{})
			if err != nil {
				t.Fatal(err)
			}
			lease, err := locker.Acquire(ctx, name, dialects.Options{AtMost: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = lease.Release(context.Background()) }()

			marker := filepath.Join(t.TempDir(), "ran")
			r := runCmd(t, false, nil, "run", "--dsn", s.dsn, "--strategy", "session", "--name", name, "--", "touch", marker)
			if code := ExitCode(r.err); code != CodeOK || r.err == nil {
				t.Fatalf("run: exit %d (%v), want a skip (0) with its message", code, r.err)
			}
			// The holder as `locks ls` shows it.
			ls := runCmd(t, false, nil, "locks", "ls", "--dsn", s.dsn, "--strategy", "session", "--name", name, "-o", "json")
			var locks []lockView
			if ls.err != nil || json.Unmarshal([]byte(ls.stdout), &locks) != nil || len(locks) != 1 || locks[0].Holder.SessionID == nil {
				t.Fatalf("locks ls: %v\n%s%s", ls.err, ls.stdout, ls.stderr)
			}
			h := locks[0].Holder
			if s.name == "postgres" && str(h.Application) != "holder-app" {
				t.Fatalf("locks ls shows application %q, want holder-app", str(h.Application))
			}
			want := `skipped touch: lock "` + name + `" is held by session ` + *h.SessionID + ": " + str(h.User) + "@" + str(h.Client)
			if h.Application != nil {
				want += ", " + *h.Application
			}
			if msg := r.err.Error(); !strings.HasPrefix(msg, want) {
				t.Errorf("message %q: want it to start %q", msg, want)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("the command ran")
			}
		})
	}
}
