package output

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
)

// ReportOptions say where a selfcheck report goes.
type ReportOptions struct {
	// TTY: stdout is a terminal, so the table is boxed.
	TTY bool
	// Color: ANSI colour is allowed (a terminal without NO_COLOR).
	Color bool
	// Width of the terminal the table is fitted into; 0: no limit.
	Width int
	// Hostname is the machine the checks ran on, for JUnit; "" is
	// written as "localhost".
	Hostname string
}

// reportDocument is a report as JSON and YAML write it: the start time
// first, then the fields of checks.Report.
type reportDocument struct {
	StartedAt *string `json:"started_at,omitempty"`
	*checks.Report
}

func document(r *checks.Report) reportDocument {
	d := reportDocument{Report: r}
	if !r.StartedAt.IsZero() {
		s := Time(r.StartedAt)
		d.StartedAt = &s
	}
	return d
}

// WriteReport renders r in format f. Table and Markdown end with the
// Summary line; JSON, YAML and JUnit hold only the document.
func WriteReport(w io.Writer, r *checks.Report, f Format, o ReportOptions) error {
	r = normalize(r)
	switch f {
	case Table:
		return writeReportTable(w, r, o)
	case JSON:
		return WriteJSON(w, document(r))
	case YAML:
		return WriteYAML(w, document(r))
	case Markdown:
		return writeReportMarkdown(w, r)
	case JUnit:
		return writeReportJUnit(w, r, o.Hostname)
	}
	return fmt.Errorf("unknown output format %q: use one of %s", f, List(ReportFormats))
}

// Summary is the closing line of a report: "N passed, N warned, N failed,
// N skipped", each check counted once.
func Summary(r *checks.Report) string {
	return fmt.Sprintf("%d passed, %d warned, %d failed, %d skipped", r.Passed, r.Warned, r.Failed, r.Skipped)
}

// normalize returns a copy of r whose lists are never nil, so JSON shows
// [] rather than null.
func normalize(r *checks.Report) *checks.Report {
	if r == nil {
		r = &checks.Report{}
	}
	c := *r
	if c.Results == nil {
		c.Results = []checks.Result{}
	}
	return &c
}

// DescribeDatabase says what the report ran on: "PostgreSQL 15.4",
// "MariaDB 10.11.6", "SQLite 3.46.0 (aurora)". Product names come from the
// registry entry that detected them (Dialect.Products).
func DescribeDatabase(info dialects.Info) string {
	name := dialects.ProductTitle(info.Product)
	if name == "" {
		name = info.Product
	}
	if name == "" {
		name = info.Dialect
	}
	s := strings.TrimSpace(name + " " + info.Version)
	var extra []string
	if info.Variant != "" {
		extra = append(extra, info.Variant)
	}
	if info.Mode != "" {
		extra = append(extra, info.Mode+" mode")
	}
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, ", ") + ")"
	}
	return s
}

// FormatDuration rounds d for people: microseconds below a millisecond,
// else milliseconds.
func FormatDuration(d time.Duration) string {
	if d < time.Millisecond {
		return d.Round(time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}

func strategyLabel(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func statusText(s checks.Status, color bool) string {
	switch s {
	case checks.StatusPass:
		return Paint(color, Green, string(s))
	case checks.StatusFail:
		return Paint(color, BoldRed, string(s))
	case checks.StatusWarn, checks.StatusSkip:
		return Paint(color, Yellow, string(s))
	}
	return string(s)
}

func writeReportTable(w io.Writer, r *checks.Report, o ReportOptions) error {
	var b strings.Builder
	// On a narrow terminal the strategy goes first (the check ID starts
	// with it), then the time; the detail wraps.
	t := TableData{Header: []string{"CHECK", "STRATEGY", "STATUS", "TIME", "DETAIL"}, Width: o.Width, Drop: []string{"STRATEGY", "TIME"}}
	if !o.TTY {
		t.Header = append(t.Header, "REMEDY")
	}
	for _, res := range r.Results {
		row := []string{res.ID, strategyLabel(res.Strategy), statusText(res.Status, o.Color && o.TTY), FormatDuration(res.Duration), res.Detail}
		if !o.TTY {
			row = append(row, res.Remedy)
		}
		t.Rows = append(t.Rows, row)
	}
	if o.TTY {
		fmt.Fprintf(&b, "Target:   %s\nDatabase: %s\n", r.Target, DescribeDatabase(r.Info))
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if err := WriteTable(w, t, o.TTY); err != nil {
		return err
	}
	b.Reset()
	if o.TTY {
		for _, res := range r.Results {
			if res.Remedy != "" && (res.Status == checks.StatusFail || res.Status == checks.StatusWarn) {
				fmt.Fprintf(&b, "%s %s: %s\n", statusText(res.Status, o.Color), res.ID, res.Remedy)
			}
		}
		fmt.Fprintf(&b, "\nElapsed %s\n", FormatDuration(r.Elapsed))
	}
	b.WriteString(Summary(r) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}
