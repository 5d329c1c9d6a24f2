package output

import (
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// TableData is a header and rows of cells, with how to fit them into a
// terminal.
type TableData struct {
	Header []string
	Rows   [][]string

	// Width is the terminal's width in columns; a boxed table is fitted
	// into it (see fitTable). 0: no limit but MaxCellWidth.
	Width int
	// Drop names the header cells of the columns a too-wide table leaves
	// out, first to last, before it wraps the cells of the rest.
	Drop []string
	// Whole names the header cells of columns kept unwrapped while the
	// other columns can still be narrowed to fit: values a person copies
	// (a key to pass to a flag).
	Whole []string
}

// MaxCellWidth is where a terminal table wraps a long cell.
const MaxCellWidth = 72

// WriteTable writes t for a person when tty is true (a boxed table fitted
// into t.Width; cells may carry ANSI colour) and for a pipe otherwise: the
// header and one line per row with every column, cells separated by tabs,
// with tabs and newlines inside cells turned into spaces and no colour.
func WriteTable(w io.Writer, t TableData, tty bool) error {
	if !tty {
		return writeTSV(w, t)
	}
	t = fitTable(t)
	tbl := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithTrimSpace(tw.Off),
	)
	tbl.Header(toAny(t.Header)...)
	for _, r := range t.Rows {
		if err := tbl.Append(r); err != nil {
			return fmt.Errorf("write table: %w", err)
		}
	}
	if err := tbl.Render(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}

func writeTSV(w io.Writer, t TableData) error {
	var b strings.Builder
	line := func(cells []string) {
		for i, c := range cells {
			if i > 0 {
				b.WriteByte('\t')
			}
			b.WriteString(oneLine(StripANSI(c)))
		}
		b.WriteByte('\n')
	}
	if len(t.Header) > 0 {
		line(t.Header)
	}
	for _, r := range t.Rows {
		line(r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// oneLine replaces tabs and line breaks by single spaces.
func oneLine(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\t' || r == '\n' || r == '\r' }), " ")
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
