//go:build unix

package cmd

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
)

// A pause longer than 366 days (--for 1000000h, an --until years away) is
// a usage error in one line, exit 2, and writes nothing: no row for a job
// that had none (--create), the row of a paused job as it was.
func TestPauseLongerThanAYearIsRefused(t *testing.T) {
	path, l := pausedFile(t)
	if r := runCmd(t, false, nil, "pause", "nightly", "--for", "1h", "--by", "alice", "--yes", "--dsn", path); r.err != nil {
		t.Fatal(r.err)
	}
	paused := rowOf(t, l, "nightly")
	paused.DBNow = time.Time{} // the time of the read
	now := time.Now().UTC()
	for _, tc := range []struct{ what, want string }{
		{"--for=1000000h", "--for 1000000h0m0s is longer than a pause may last, 366 days (8784h)"},
		{"--for=8785h", "--for 8785h0m0s is longer than a pause may last"},
		{"--for=2562047h", "longer than a pause may last"},
		{"--until=" + now.Add(367*24*time.Hour).Format(time.RFC3339), "is more than 366 days (8784h) away"},
		{"--until=9999-12-31T23:59:59Z", "--until 9999-12-31T23:59:59Z is more than 366 days (8784h) away"},
	} {
		for _, name := range []string{"fresh", "nightly"} {
			t.Run(tc.what+" "+name, func(t *testing.T) {
				r := runCmd(t, false, nil, "pause", name, tc.what, "--create", "--by", "bob", "--yes", "--dsn", path)
				if code := ExitCode(r.err); code != CodeUsage {
					t.Fatalf("exit %d (%v), want %d", code, r.err, CodeUsage)
				}
				if msg := r.err.Error(); !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
					t.Errorf("error %q: want one line saying %q", msg, tc.want)
				}
				if _, found, err := l.Inspect(context.Background(), "fresh"); err != nil || found {
					t.Errorf("a refused pause wrote a row for a job that had none: %v, %v", found, err)
				}
				row := rowOf(t, l, "nightly")
				row.DBNow = time.Time{}
				if row != paused {
					t.Errorf("a refused pause changed the paused row:\n%+v\nwas\n%+v", row, paused)
				}
			})
		}
	}
}

// The longest pause, 366 days, is taken and ends 8784h after it starts,
// on the database clock — in ShedLock's MySQL table too, whose lock_until
// is a TIMESTAMP(3) that ends in January 2038 — and one a millisecond
// longer is refused without a write.
func TestPauseOfAYearFitsTheTable(t *testing.T) {
	for _, s := range liveServers(t) {
		t.Run(s.name, func(t *testing.T) {
			table := strings.Replace(checks.NewPrefix(), "selfcheck", "pause_bound", 1)
			l := openTableLocker(t, s.dsn, dialects.Table{Preset: dialects.PresetShedlock, Name: table})
			t.Cleanup(func() { _ = l.(dialects.TableDropper).DropTable(context.Background()) })
			args := []string{"--create", "--yes", "--dsn", s.dsn, "--preset", "shedlock", "--table", table}
			r := runCmd(t, false, nil, append([]string{"pause", "long", "--for", "8784h1ms"}, args...)...)
			if code := ExitCode(r.err); code != CodeUsage {
				t.Fatalf("pause --for 8784h1ms: exit %d (%v), want %d", code, r.err, CodeUsage)
			}
			if _, found, err := l.Inspect(context.Background(), "long"); err != nil || found {
				t.Fatalf("a refused pause wrote a row: %v, %v", found, err)
			}
			r = runCmd(t, false, nil, append([]string{"pause", "long", "--for", "8784h"}, args...)...)
			if r.err != nil {
				t.Fatalf("pause --for 8784h: %v", r.err)
			}
			row := rowOf(t, l, "long")
			if d := row.Until.Sub(row.LockedAt); dialects.TableRowState(row) != dialects.StatePaused || d < dialects.MaxPause-time.Second || d > dialects.MaxPause+time.Second {
				t.Errorf("row %+v: paused for %s, want %s", row, d, dialects.MaxPause)
			}
		})
	}
}
