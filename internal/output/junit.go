package output

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/schedlock/schedlock/checks"
)

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	ID         int             `xml:"id,attr"`
	Name       string          `xml:"name,attr"`
	Timestamp  string          `xml:"timestamp,attr"`
	Hostname   string          `xml:"hostname,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure"`
	Skipped   *junitMessage `xml:"skipped"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

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
	doc := junitSuites{Name: "schedlock selfcheck", Time: seconds(r.Elapsed), Suites: []junitSuite{}}
	index := map[string]int{}
	props := []junitProperty{
		{Name: "target", Value: r.Target},
		{Name: "database", Value: DescribeDatabase(r.Info)},
		{Name: "dialect", Value: r.Info.Dialect},
		{Name: "product", Value: r.Info.Product},
		{Name: "version", Value: r.Info.Version},
	}
	var suiteTime = map[string]time.Duration{}
	for _, res := range r.Results {
		name := suiteName(res.Strategy)
		i, ok := index[name]
		if !ok {
			i = len(doc.Suites)
			index[name] = i
			doc.Suites = append(doc.Suites, junitSuite{ID: i, Name: name, Timestamp: start.Add(before).UTC().Format(junitTimeLayout), Hostname: hostname, Properties: props})
		}
		s := &doc.Suites[i]
		c := junitCase{Name: res.ID + ": " + res.Title, Classname: name, Time: seconds(res.Duration)}
		switch res.Status {
		case checks.StatusFail:
			text := res.Detail
			if res.Remedy != "" {
				text += "\nremedy: " + res.Remedy
			}
			c.Failure = &junitMessage{Message: firstLine(res.Detail), Type: "fail", Text: text}
			s.Failures++
			doc.Failures++
		case checks.StatusSkip:
			c.Skipped = &junitMessage{Message: firstLine(res.Detail)}
			s.Skipped++
			doc.Skipped++
		case checks.StatusWarn:
			c.SystemOut = "warning: " + res.Detail
			if res.Remedy != "" {
				c.SystemOut += "\nremedy: " + res.Remedy
			}
		default:
			c.SystemOut = res.Detail
		}
		s.Tests++
		doc.Tests++
		suiteTime[name] += res.Duration
		before += res.Duration
		s.Cases = append(s.Cases, c)
	}
	for i := range doc.Suites {
		doc.Suites[i].Time = seconds(suiteTime[doc.Suites[i].Name])
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
