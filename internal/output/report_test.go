package output

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jstemmer/go-junit-report/v2/junit"
	"go.yaml.in/yaml/v3"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/golden"
)

// sampleReport has one check of every status, with characters every
// format must escape.
func sampleReport() *checks.Report {
	return &checks.Report{
		Target: "postgres://app:xxxxx@db1:5432/jobs?sslmode=disable",
		Info:   dialects.Info{Dialect: "postgres", Product: dialects.ProductPostgreSQL, Version: "15.4", Banner: "PostgreSQL 15.4 on x86_64-pc-linux-gnu"},
		Results: []checks.Result{
			{ID: "probe.clock", Title: "database clock advances", Status: checks.StatusPass, Duration: 1500 * time.Microsecond, Detail: "clock_timestamp() moved 12ms"},
			{ID: "session.acquire", Title: "acquire & release", Strategy: "session", Status: checks.StatusPass, Duration: 3 * time.Millisecond, Detail: "held by <conn 42> | released"},
			{ID: "session.kill", Title: "kill frees the lock", Strategy: "session", Status: checks.StatusSkip, Duration: 0, Detail: "no privilege to terminate sessions"},
			{ID: "table.contend", Title: "second owner is refused", Strategy: "table", Status: checks.StatusFail, Duration: 250 * time.Millisecond, Detail: "both owners acquired \"jobs\"\nsecond line", Remedy: "use --strategy session & check the `lock_until` column"},
			{ID: "table.cleanup", Title: "leave no lock table behind", Strategy: "table", Status: checks.StatusWarn, Duration: 2 * time.Millisecond, Detail: "table left behind", Remedy: "drop the table schedlock_selfcheck_1 by hand"},
		},
		Passed: 2, Failed: 1, Skipped: 1, Warned: 1,
		Elapsed:   1234 * time.Millisecond,
		StartedAt: time.Date(2025, 3, 4, 5, 6, 7, 891_234_567, time.FixedZone("CET", 3600)),
	}
}

func TestWriteReportGolden(t *testing.T) {
	cases := []struct {
		file   string
		format Format
		opts   ReportOptions
	}{
		{"selfcheck.tsv.golden", Table, ReportOptions{}},
		{"selfcheck.tty.golden", Table, ReportOptions{TTY: true}},
		{"selfcheck.color.golden", Table, ReportOptions{TTY: true, Color: true}},
		{"selfcheck.tty60.golden", Table, ReportOptions{TTY: true, Width: 60}},
		{"selfcheck.json.golden", JSON, ReportOptions{}},
		{"selfcheck.yaml.golden", YAML, ReportOptions{}},
		{"selfcheck.md.golden", Markdown, ReportOptions{}},
		{"selfcheck.junit.xml.golden", JUnit, ReportOptions{Hostname: "ci-runner-1"}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteReport(&buf, sampleReport(), tc.format, tc.opts); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", tc.file), buf.Bytes())
		})
	}
}

func TestSummaryIsLastLineOfHumanFormats(t *testing.T) {
	for _, f := range []Format{Table, Markdown} {
		for _, tty := range []bool{false, true} {
			var buf bytes.Buffer
			if err := WriteReport(&buf, sampleReport(), f, ReportOptions{TTY: tty}); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
			if last := lines[len(lines)-1]; last != "2 passed, 1 warned, 1 failed, 1 skipped" {
				t.Errorf("%s (tty=%v): last line %q", f, tty, last)
			}
		}
	}
}

func TestPipedTableHasNoColourAndOneLinePerCheck(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteReport(&buf, sampleReport(), Table, ReportOptions{TTY: false, Color: true}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.Contains(out, "\x1b[") {
		t.Errorf("piped table carries ANSI escapes:\n%q", out)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if want := 1 + len(sampleReport().Results) + 1; len(lines) != want {
		t.Fatalf("got %d lines, want header + %d checks + summary:\n%s", len(lines), len(sampleReport().Results), out)
	}
	for _, l := range lines[:len(lines)-1] {
		if n := strings.Count(l, "\t"); n != 5 {
			t.Errorf("line has %d tabs, want 5: %q", n, l)
		}
	}
}

func TestJSONFields(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteReport(&buf, sampleReport(), JSON, ReportOptions{}); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"started_at", "target", "database", "checks", "passed", "failed", "skipped", "warned", "elapsed_ns"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("JSON report lacks %q: %s", k, buf.String())
		}
	}
	if doc["started_at"] != "2025-03-04T04:06:07.891Z" {
		t.Errorf("started_at = %v, want RFC 3339 UTC with milliseconds", doc["started_at"])
	}
	check := doc["checks"].([]any)[3].(map[string]any)
	for _, k := range []string{"id", "title", "strategy", "status", "duration_ns", "detail", "remedy"} {
		if _, ok := check[k]; !ok {
			t.Errorf("JSON check lacks %q: %v", k, check)
		}
	}
	if check["status"] != "fail" || check["duration_ns"].(float64) != float64(250*time.Millisecond) {
		t.Errorf("check 3 = %v", check)
	}
}

func TestEmptyReportListsAreEmptyNotNull(t *testing.T) {
	for _, f := range []Format{JSON, YAML} {
		var buf bytes.Buffer
		if err := WriteReport(&buf, &checks.Report{}, f, ReportOptions{}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), "[]") || strings.Contains(buf.String(), "null") {
			t.Errorf("%s of an empty report:\n%s", f, buf.String())
		}
	}
}

func TestYAMLMatchesJSON(t *testing.T) {
	var j, y bytes.Buffer
	if err := WriteReport(&j, sampleReport(), JSON, ReportOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteReport(&y, sampleReport(), YAML, ReportOptions{}); err != nil {
		t.Fatal(err)
	}
	var fromJSON, fromYAML any
	if err := json.Unmarshal(j.Bytes(), &fromJSON); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(y.Bytes(), &fromYAML); err != nil {
		t.Fatal(err)
	}
	jb, _ := json.Marshal(fromJSON)
	yb, err := json.Marshal(normalizeYAML(fromYAML))
	if err != nil {
		t.Fatal(err)
	}
	if string(jb) != string(yb) {
		t.Errorf("YAML and JSON disagree:\njson %s\nyaml %s", jb, yb)
	}
}

// normalizeYAML turns YAML's map[string]any and ints into JSON's shapes.
func normalizeYAML(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeYAML(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = normalizeYAML(e)
		}
		return x
	case int:
		return float64(x)
	}
	return v
}

func TestJUnitCounts(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteReport(&buf, sampleReport(), JUnit, ReportOptions{}); err != nil {
		t.Fatal(err)
	}
	var doc junit.Testsuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("junit is not XML: %v\n%s", err, buf.String())
	}
	if doc.Tests != 5 || doc.Failures != 1 || doc.Skipped != 1 {
		t.Errorf("testsuites counts tests=%d failures=%d skipped=%d", doc.Tests, doc.Failures, doc.Skipped)
	}
	var names []string
	for _, s := range doc.Suites {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, ","); got != "selfcheck.probes,selfcheck.session,selfcheck.table" {
		t.Errorf("suites %s", got)
	}
	// Ant's junit.xsd requires id, timestamp (no zone) and hostname; each
	// suite starts after the checks of the suites before it.
	for i, s := range doc.Suites {
		if s.ID != i || s.Hostname != "localhost" {
			t.Errorf("suite %d: id %d, hostname %q", i, s.ID, s.Hostname)
		}
	}
	if ts := []string{doc.Suites[0].Timestamp, doc.Suites[1].Timestamp, doc.Suites[2].Timestamp}; ts[0] != "2025-03-04T04:06:07" || ts[1] != "2025-03-04T04:06:07" || ts[2] != "2025-03-04T04:06:07" {
		t.Errorf("suite timestamps %v", ts)
	}
	fail := doc.Suites[2].Testcases[0].Failure
	if fail == nil || !strings.Contains(fail.Data, "remedy: use --strategy session") {
		t.Errorf("failure element %+v lacks detail and remedy", fail)
	}
}

func TestParseFormat(t *testing.T) {
	if f, err := ParseFormat("JSON", Common); err != nil || f != JSON {
		t.Errorf("ParseFormat(JSON) = %q, %v", f, err)
	}
	_, err := ParseFormat("junit", Common)
	if err == nil || !strings.Contains(err.Error(), "table, json, yaml") {
		t.Errorf("ParseFormat(junit, Common) error = %v", err)
	}
}

func TestTimeIsUTC(t *testing.T) {
	at := time.Date(2025, 3, 4, 5, 6, 7, 800_000_000, time.FixedZone("CET", 3600))
	if got := Time(at); got != "2025-03-04T04:06:07.800Z" {
		t.Errorf("Time = %q", got)
	}
	if got := Time(time.Time{}); got != "" {
		t.Errorf("Time(zero) = %q", got)
	}
}
