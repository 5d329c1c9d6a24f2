package cmd

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/olekukonko/tablewriter/pkg/twwidth"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/internal/iostreams"
)

func TestProgressLineCountsAndFits(t *testing.T) {
	var buf bytes.Buffer
	p := &progressLine{w: &buf, width: func() int { return 30 }}
	p.setTotal(2)
	p.update(checks.Result{ID: "table.acquire", Title: "acquire and release a lease of the lock table"}, true)
	p.update(checks.Result{ID: "table.acquire"}, false)
	p.update(checks.Result{ID: "x", Title: "y"}, true)
	p.clear()
	frames := strings.Split(buf.String(), "\r\x1b[K")
	if len(frames) != 4 || frames[0] != "" || frames[3] != "" {
		t.Fatalf("frames %q", frames)
	}
	if frames[1] != "[1/2] table.acquire: acquire…" || twwidth.Width(frames[1]) > 29 {
		t.Errorf("first frame %q (%d columns), want it cut to 29", frames[1], twwidth.Width(frames[1]))
	}
	if frames[2] != "[2/2] x: y…" {
		t.Errorf("second frame %q", frames[2])
	}
}

// TestSelfcheckProgressOnATerminal runs selfcheck on the embedded SQLite
// file with stderr a 50-column terminal.
func TestSelfcheckProgressOnATerminal(t *testing.T) {
	ios, _, _, errOut := iostreams.Test()
	ios.SetStderrTTY(true)
	ios.SetTerminalWidth(50)
	f := testFactory(ios, map[string]string{}, t.TempDir())
	if err := Execute(context.Background(), f, []string{"selfcheck", "-o", "json"}); err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	frames := strings.Split(errOut.String(), "\r\x1b[K")
	counter := regexp.MustCompile(`^\[(\d+)/(\d+)\] `)
	seen := 0
	for _, fr := range frames[1 : len(frames)-1] {
		m := counter.FindStringSubmatch(fr)
		if m == nil {
			t.Errorf("frame without [N/total]: %q", fr)
			continue
		}
		seen++
		if twwidth.Width(fr) > 49 {
			t.Errorf("frame of %d columns on a 50-column terminal: %q", twwidth.Width(fr), fr)
		}
		if n, _ := strconv.Atoi(m[1]); n > mustAtoi(t, m[2]) {
			t.Errorf("counter past the total: %q", fr)
		}
	}
	if seen < 10 {
		t.Errorf("%d progress frames: %q", seen, errOut.String())
	}
	if last := frames[len(frames)-1]; !strings.Contains(last, " passed, ") {
		t.Errorf("after the cleared line, stderr has %q, want the summary", last)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
