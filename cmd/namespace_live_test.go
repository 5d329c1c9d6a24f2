//go:build unix

package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/dsn"
)

// sessionLocker connects to raw and returns its session locker.
func sessionLocker(t *testing.T, raw string) dialects.Locker {
	t.Helper()
	d, err := dsn.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	db, err := sqlBackend(d.Connect(ctx))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	l, err := db.Locker(dialects.StrategySession, dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestNamespaceLive: on a live PostgreSQL and MariaDB server, while the
// session lock of one namespace is held, `run --namespace` of that
// namespace is skipped and of another one runs, on the session and the
// table strategy; `locks ls --namespace --name` finds the session lock
// under its bare name.
func TestNamespaceLive(t *testing.T) {
	for _, s := range liveServers(t) {
		t.Run(s.name, func(t *testing.T) {
			name := "ns-live-" + strings.ReplaceAll(dialects.NewOwner()[len(dialects.NewOwner())-8:], "-", "")
			table := "ns_live_" + name[len(name)-8:]
			session := sessionLocker(t, s.dsn)
			hold(t, session, dialects.NamespacedName("prod", name), "")
			tl := openTableLocker(t, s.dsn, dialects.Table{Name: table})
			t.Cleanup(func() {
				if d, ok := tl.(dialects.TableDropper); ok {
					_ = d.DropTable(context.Background())
				}
			})
			hold(t, tl, dialects.NamespacedName("prod", name), "node-p:1")

			for _, strategy := range [][]string{{"--strategy", "session"}, {"--table", table}} {
				marker := filepath.Join(t.TempDir(), "ran")
				run := func(ns string) runResult {
					args := append([]string{"run", "--dsn", s.dsn, "--namespace", ns, "--name", name}, strategy...)
					return execRun(t, context.Background(), "", append(args, "--", "touch", marker)...)
				}
				if r := run("prod"); r.code != CodeOK || r.err == nil || !strings.Contains(r.err.Error(), "is held") {
					t.Fatalf("%v: run --namespace prod: exit %d, %v; want skipped", strategy, r.code, r.err)
				}
				if _, err := os.Stat(marker); err == nil {
					t.Fatalf("%v: the command ran while prod's lock is held", strategy)
				}
				if r := run("staging"); r.err != nil {
					t.Fatalf("%v: run --namespace staging: %v", strategy, r.err)
				}
				if _, err := os.Stat(marker); err != nil {
					t.Fatalf("%v: run --namespace staging did not run the command", strategy)
				}
			}

			got := describeListed(listJSON(t, "--dsn", s.dsn, "--namespace", "prod", "--name", name, "--strategy", "session"))
			if !strings.HasPrefix(got, "prod|"+name+"|held|") || strings.Contains(got, ",") {
				t.Errorf("locks ls --namespace prod --name %s: %s; want prod's session lock under its bare name", name, got)
			}
			if got := listJSON(t, "--dsn", s.dsn, "--namespace", "staging", "--name", name, "--strategy", "session"); len(got) != 0 {
				t.Errorf("locks ls --namespace staging: %s; want nothing (staging's run has ended)", describeListed(got))
			}
		})
	}
}
