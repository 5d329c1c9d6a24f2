package output

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"github.com/schedlock/schedlock/checks"
)

// suiteName names the testsuite of a strategy; checks with no strategy are
// the "probes".
func suiteName(strategy string) string {
	if strategy == "" {
		return "selfcheck.probes"
	}
	return "selfcheck." + strategy
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// junitTimeLayout is the timestamp of the JUnit schema (Ant's
// junit.xsd, ISO8601_DATETIME_PATTERN): no zone, no fraction; the time is
// UTC.
const junitTimeLayout = "2006-01-02T15:04:05"

// writeReportJUnit writes one testsuite per strategy (probes first, in the
// order the checks ran), one testcase per check. A failed check carries a
// failure element with its detail and remedy, a skipped one a skipped
// element; a warning passes with the warning in system-out. Each suite
// carries the attributes the common schema requires: id (0, 1, …),
// timestamp (UTC, when its first check started: the report's start plus
// the checks before it) and hostname.
func writeReportJUnit(w io.Writer, r *checks.Report, hostname string) error {
	if hostname == "" {
		hostname = "localhost"
	}
	start := r.StartedAt
	if start.IsZero() {
		start = time.Now()
	}
	var before time.Duration // run time of the checks before the current one
	props := []junit.Property{
		{Name: "target", Value: r.Target},
		{Name: "database", Value: DescribeDatabase(r.Info)},
		{Name: "dialect", Value: r.Info.Dialect},
		{Name: "product", Value: r.Info.Product},
		{Name: "version", Value: r.Info.Version},
	}
	// A suite's time is the sum of its checks', kept as a duration until
	// the suite is added (the library keeps times as strings).
	type suite struct {
		junit.Testsuite
		took time.Duration
	}
	var suites []*suite
	index := map[string]*suite{}
	for _, res := range r.Results {
		name := suiteName(res.Strategy)
		s := index[name]
		if s == nil {
			s = &suite{Testsuite: junit.Testsuite{ID: len(suites), Name: name, Timestamp: start.Add(before).UTC().Format(junitTimeLayout), Hostname: hostname, Properties: &props}}
			index[name] = s
			suites = append(suites, s)
		}
		c := junit.Testcase{Name: res.ID + ": " + res.Title, Classname: name, Time: seconds(res.Duration)}
		switch res.Status {
		case checks.StatusFail:
			text := res.Detail
			if res.Remedy != "" {
				text += "\nremedy: " + res.Remedy
			}
			c.Failure = &junit.Result{Message: firstLine(res.Detail), Type: "fail", Data: text}
		case checks.StatusSkip:
			c.Skipped = &junit.Result{Message: firstLine(res.Detail)}
		case checks.StatusWarn:
			out := "warning: " + res.Detail
			if res.Remedy != "" {
				out += "\nremedy: " + res.Remedy
			}
			c.SystemOut = &junit.Output{Data: out}
		default:
			c.SystemOut = &junit.Output{Data: res.Detail}
		}
		s.AddTestcase(c)
		s.took += res.Duration
		before += res.Duration
	}
	doc := junit.Testsuites{Name: "schedlock selfcheck", Time: seconds(r.Elapsed)}
	for _, s := range suites {
		s.Time = seconds(s.took)
		doc.AddSuite(s.Testsuite)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	if err := doc.WriteXML(w); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	return nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
