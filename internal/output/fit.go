package output

import (
	"slices"
	"strings"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

// minColumnWidth is the narrowest a column is wrapped to while the
// terminal leaves room for it.
const minColumnWidth = 6

// boxWidth is the width of a boxed table whose columns are widths wide:
// "│ " before each cell, " " after it, and the closing "│".
func boxWidth(widths []int) int {
	total := 1
	for _, w := range widths {
		total += w + 3
	}
	return total
}

// fitTable returns t with every cell wrapped (at spaces, else anywhere) to
// the width of its column, so that the boxed table fits into t.Width:
// while it is too wide it leaves out the columns of t.Drop in order, then
// it narrows the widest columns, each to no less than its fair share of
// what is left. Columns are never wider than MaxCellWidth.
func fitTable(t TableData) TableData {
	natural := naturalWidths(t)
	if t.Width > 0 {
		for _, name := range t.Drop {
			if boxWidth(natural) <= t.Width || len(t.Header) <= 1 {
				break
			}
			if i := slices.Index(t.Header, name); i >= 0 {
				t = dropColumn(t, i)
				natural = slices.Delete(natural, i, i+1)
			}
		}
	}
	widths := natural
	if t.Width > 0 && boxWidth(natural) > t.Width {
		widths = fitWidths(t, natural, t.Width-boxWidth(make([]int, len(natural))))
	}
	out := TableData{Header: wrapRow(t.Header, widths)}
	for _, r := range t.Rows {
		out.Rows = append(out.Rows, wrapRow(r, widths))
	}
	return out
}

// NaturalWidth is how many columns the boxed table of t takes unfitted:
// every column as wide as its widest line (at most MaxCellWidth).
func NaturalWidth(t TableData) int { return boxWidth(naturalWidths(t)) }

// naturalWidths is, per column, its widest line (header included), at
// most MaxCellWidth.
func naturalWidths(t TableData) []int {
	widths := make([]int, len(t.Header))
	measure := func(row []string) {
		for i, c := range row {
			if i >= len(widths) {
				break
			}
			for _, line := range strings.Split(c, "\n") {
				widths[i] = max(widths[i], min(twwidth.Width(line), MaxCellWidth))
			}
		}
	}
	measure(t.Header)
	for _, r := range t.Rows {
		measure(r)
	}
	return widths
}

// fitWidths divides budget columns among t's columns: those of t.Whole
// get their natural width when the others can still have minColumnWidth
// (or less, if that is all they want), the others share the rest
// (shareWidth); otherwise every column shares the budget.
func fitWidths(t TableData, natural []int, budget int) []int {
	var others, want []int
	left, least := budget, 0
	for i, name := range t.Header {
		if slices.Contains(t.Whole, name) {
			left -= natural[i]
			continue
		}
		others, want = append(others, i), append(want, natural[i])
		least += min(natural[i], minColumnWidth)
	}
	if len(others) == len(natural) || left < least {
		return shareWidth(natural, budget)
	}
	widths := slices.Clone(natural)
	for j, w := range shareWidth(want, left) {
		widths[others[j]] = w
	}
	return widths
}

// shareWidth divides budget columns among columns that want natural:
// the narrow ones get what they want, the others an equal share of the
// rest (at least minColumnWidth, or their natural width if less).
func shareWidth(natural []int, budget int) []int {
	widths := make([]int, len(natural))
	order := make([]int, len(natural))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return natural[a] - natural[b] })
	left := len(order)
	for _, i := range order {
		share := budget / left
		if budget > 0 && budget%left > 0 {
			share++ // the widest columns come last and take the remainder
		}
		widths[i] = max(min(natural[i], share), min(natural[i], minColumnWidth))
		budget -= widths[i]
		left--
	}
	return widths
}

func dropColumn(t TableData, i int) TableData {
	out := t
	out.Header = slices.Delete(slices.Clone(t.Header), i, i+1)
	out.Rows = make([][]string, len(t.Rows))
	for r, row := range t.Rows {
		if i < len(row) {
			row = slices.Delete(slices.Clone(row), i, i+1)
		}
		out.Rows[r] = row
	}
	return out
}

func wrapRow(row []string, widths []int) []string {
	out := make([]string, len(row))
	for i, c := range row {
		if i < len(widths) {
			c = wrapCell(c, widths[i])
		}
		out[i] = c
	}
	return out
}

// wrapCell breaks s into lines of at most width columns, at spaces where
// it can and inside a word where it must. A line that fits is kept as it
// is (colour included); one that does not loses its colour.
func wrapCell(s string, width int) string {
	if width <= 0 {
		return s
	}
	var lines []string
	for _, para := range strings.Split(s, "\n") {
		if twwidth.Width(para) <= width {
			lines = append(lines, para)
			continue
		}
		lines = append(lines, wrapLine(StripANSI(para), width)...)
	}
	return strings.Join(lines, "\n")
}

func wrapLine(s string, width int) []string {
	var lines []string
	var cur strings.Builder
	curWidth := 0
	flush := func() {
		lines = append(lines, cur.String())
		cur.Reset()
		curWidth = 0
	}
	for _, word := range strings.Fields(s) {
		ww := twwidth.Width(word)
		switch {
		case curWidth > 0 && curWidth+1+ww <= width:
			cur.WriteByte(' ')
			cur.WriteString(word)
			curWidth += 1 + ww
			continue
		case curWidth > 0:
			flush()
		}
		for ww > width {
			head, rest := splitAtWidth(word, width)
			lines = append(lines, head)
			word, ww = rest, twwidth.Width(rest)
		}
		cur.WriteString(word)
		curWidth = ww
	}
	if curWidth > 0 || len(lines) == 0 {
		flush()
	}
	return lines
}

// splitAtWidth splits s after its first runes that fill width columns (at
// least one rune).
func splitAtWidth(s string, width int) (head, rest string) {
	w := 0
	for i, r := range s {
		rw := twwidth.Width(string(r))
		if w+rw > width && i > 0 {
			return s[:i], s[i:]
		}
		w += rw
	}
	return s, ""
}

// Truncate cuts s to at most width display columns, ending it with "…"
// when it was cut; width 0 means no limit. s must not carry ANSI colour.
func Truncate(s string, width int) string {
	if width <= 0 || twwidth.Width(s) <= width {
		return s // twwidth.Truncate would append the "…" to a string it did not cut
	}
	return twwidth.Truncate(s, width, "…")
}
