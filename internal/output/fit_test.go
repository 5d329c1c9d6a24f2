package output

import (
	"bytes"
	"strings"
	"testing"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

func wideTable(width int) TableData {
	return TableData{
		Header: []string{"NAME", "KEY", "STATE", "OWNER / HOLDER", "AGE", "SOURCE"},
		Rows: [][]string{
			{"nightly-report", "7440995589958059143", "\x1b[32mheld\x1b[0m", "session 4242: app@10.0.0.7, reports, since 09:58:30", "2s", "pg_locks"},
			{"a-very-long-lock-name-without-any-spaces-at-all-0123456789", "-", "expired", "host-b", "35m", "shedlock"},
			{"sync", "-", "held", "web-3:4711:9f1c2a7b", "1h", "schedlock"},
		},
		Drop:  []string{"AGE", "KEY"},
		Width: width,
	}
}

func TestTableFitsTheTerminal(t *testing.T) {
	for _, width := range []int{200, 120, 80, 60, 40} {
		var buf bytes.Buffer
		if err := WriteTable(&buf, wideTable(width), true); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
			if w := twwidth.Width(line); w > width {
				t.Errorf("width %d: line is %d columns:\n%s", width, w, out)
				break
			}
		}
		// What must survive any width: every word of the kept columns.
		flat := strings.Join(columnTexts(out), "|")
		for _, want := range []string{"nightly-report", "session4242:app@10.0.0.7,reports,since09:58:30", "web-3:4711:9f1c2a7b", "a-very-long-lock-name-without-any-spaces-at-all-0123456789"} {
			if !strings.Contains(flat, want) {
				t.Errorf("width %d: %q lost:\n%s", width, want, out)
			}
		}
		if width >= 200 && (!strings.Contains(out, "AGE") || !strings.Contains(out, "7440995589958059143")) {
			t.Errorf("width %d: a column was dropped though the table fits:\n%s", width, out)
		}
		if width <= 80 && strings.Contains(out, "AGE") {
			t.Errorf("width %d: AGE, the first to drop, is still there:\n%s", width, out)
		}
	}
}

// A Whole column keeps its values on one line while the others can
// narrow; when they cannot, it wraps like the rest.
func TestTableKeepsWholeColumns(t *testing.T) {
	for _, width := range []int{80, 59, 58, 50} {
		tbl := wideTable(width)
		tbl.Drop = []string{"AGE"}
		tbl.Whole = []string{"KEY"}
		var buf bytes.Buffer
		if err := WriteTable(&buf, tbl, true); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
			if w := twwidth.Width(line); w > width {
				t.Errorf("width %d: line is %d columns:\n%s", width, w, out)
				break
			}
		}
		whole := strings.Contains(out, "7440995589958059143")
		// 5 columns: 16 columns of borders, the key 19, the 4 others at
		// least 6 each (STATE wants 7, SOURCE 9).
		fits := width >= 16+19+4*6
		if whole != fits {
			t.Errorf("width %d: key on one line %v, want %v:\n%s", width, whole, fits, out)
		}
		if !strings.Contains(strings.Join(columnTexts(out), "|"), "7440995589958059143") {
			t.Errorf("width %d: key lost:\n%s", width, out)
		}
	}
}

func TestTableWithoutWidthWrapsAtMaxCellWidth(t *testing.T) {
	long := strings.Repeat("word ", 40)
	var buf bytes.Buffer
	if err := WriteTable(&buf, TableData{Header: []string{"A", "DETAIL"}, Rows: [][]string{{"x", long}}}, true); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimRight(buf.String(), "\n"), "\n") {
		if w := twwidth.Width(line); w > MaxCellWidth+4+5 {
			t.Errorf("line of %d columns:\n%s", w, buf.String())
		}
	}
}

func TestPipedTableKeepsEveryColumn(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTable(&buf, wideTable(40), false); err != nil {
		t.Fatal(err)
	}
	header, _, _ := strings.Cut(buf.String(), "\n")
	if header != "NAME\tKEY\tSTATE\tOWNER / HOLDER\tAGE\tSOURCE" {
		t.Errorf("piped header %q", header)
	}
}

func TestWrapLine(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  []string
	}{
		{"held by <conn 42> | released", 10, []string{"held by", "<conn 42>", "| released"}},
		{"abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
		{"", 5, []string{""}},
		{"ünïcödé wörds", 7, []string{"ünïcödé", "wörds"}},
	} {
		if got := wrapLine(tc.in, tc.width); strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("wrapLine(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}

// columnTexts reads a boxed table back: per column, the text of its cells
// top to bottom with the spaces taken out.
func columnTexts(table string) []string {
	var cols []strings.Builder
	for _, line := range strings.Split(StripANSI(table), "\n") {
		if !strings.HasPrefix(line, "│") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "│"), "│")
		if len(cols) < len(cells) {
			cols = append(cols, make([]strings.Builder, len(cells)-len(cols))...)
		}
		for i, c := range cells {
			cols[i].WriteString(strings.ReplaceAll(c, " ", ""))
		}
	}
	out := make([]string, len(cols))
	for i := range cols {
		out[i] = cols[i].String()
	}
	return out
}

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  string
	}{
		{"[3/42] table.acquire: acquire & release…", 0, "[3/42] table.acquire: acquire & release…"},
		{"[3/42] table.acquire: acquire & release", 20, "[3/42] table.acquir…"},
		{"short", 20, "short"},
		{"ünïcödé", 4, "ünï…"},
		{"abc", 1, "…"},
		{"漢字漢字", 5, "漢字…"},
		{"漢字", 2, "…"},
	} {
		got := Truncate(tc.in, tc.width)
		if got != tc.want || (tc.width > 0 && twwidth.Width(got) > tc.width) {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}

// A wrapped cell keeps the colour of its lines that fit.
func TestWrapCellKeepsColourOfLinesThatFit(t *testing.T) {
	held := "\x1b[32mheld\x1b[0m"
	got := wrapCell(held+"\nthe lease is valid until its end", 12)
	lines := strings.Split(got, "\n")
	if lines[0] != held {
		t.Errorf("first line %q, want %q", lines[0], held)
	}
	for _, l := range lines[1:] {
		if twwidth.Width(l) > 12 || strings.Contains(l, "\x1b") {
			t.Errorf("line %q: want at most 12 columns, no colour", l)
		}
	}
	if strings.Join(strings.Fields(strings.Join(lines[1:], " ")), " ") != "the lease is valid until its end" {
		t.Errorf("wrapped detail %q", lines[1:])
	}
}
