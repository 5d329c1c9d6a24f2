package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/internal/iostreams"
)

// logRecord is one line of --log-format json.
type logRecord struct {
	Time     string `json:"time"`
	Level    string `json:"level"`
	Msg      string `json:"msg"`
	Command  string `json:"command"`
	ExitCode *int   `json:"exit_code"`
}

// millisUTC is a time in output.TimeLayout.
var millisUTC = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

// TestLogFormatJSON: with --log-format json (or its variable) every line
// schedlock writes on stderr is a JSON record naming the command, while
// COMMAND's own stderr and stdout pass through untouched.
func TestLogFormatJSON(t *testing.T) {
	for _, how := range []string{"flag", "env"} {
		t.Run(how, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "locks.db")
			args := []string{"run", "-v", "--dsn", db, "--create-table", "--name", "json-log", "--", "sh", "-c", "echo child-err >&2; echo child-out"}
			env := map[string]string{}
			if how == "flag" {
				args = append([]string{"--log-format", "json"}, args...)
			} else {
				env[EnvLogFormat] = LogJSON
			}
			ios, _, _, _ := iostreams.Test()
			out, errOut := &syncBuffer{}, &syncBuffer{}
			ios.Out, ios.ErrOut = out, errOut
			if err := Execute(context.Background(), testFactory(ios, env, t.TempDir()), args); err != nil {
				t.Fatal(err)
			}
			if out.String() != "child-out\n" {
				t.Errorf("stdout %q: want only the command's", out.String())
			}
			records, raw := 0, 0
			for _, line := range strings.Split(strings.TrimSpace(errOut.String()), "\n") {
				if line == "child-err" {
					raw++
					continue
				}
				var rec logRecord
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Errorf("stderr line %q is neither JSON nor the command's: %v", line, err)
					continue
				}
				records++
				if rec.Level != "INFO" || rec.Command != "schedlock run" || rec.Time == "" || strings.HasPrefix(rec.Msg, "schedlock:") {
					t.Errorf("record %+v: want INFO of schedlock run, the message without its prefix", rec)
				}
				if !millisUTC.MatchString(rec.Time) {
					t.Errorf("record time %q: want RFC 3339 UTC with milliseconds, as every JSON time", rec.Time)
				}
			}
			if raw != 1 || records < 2 {
				t.Errorf("stderr %q: want the command's line once and schedlock's -v lines as records", errOut.String())
			}
		})
	}
}

// TestLogFormatTextIsUnchanged: the default writes the lines it always did.
func TestLogFormatTextIsUnchanged(t *testing.T) {
	db := filepath.Join(t.TempDir(), "locks.db")
	r := runCmd(t, false, nil, "run", "--log-format", "text", "-v", "--dsn", db, "--create-table", "--name", "text-log", "--", "true")
	if r.err != nil {
		t.Fatal(r.err)
	}
	for _, line := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
		if !strings.HasPrefix(line, "schedlock: ") {
			t.Errorf("text line %q", line)
		}
	}
}

// TestJSONLogLevels: warnings log at WARN, notes at INFO, the final error
// at ERROR with its exit code, and an unfinished line on Flush.
func TestJSONLogLevels(t *testing.T) {
	var buf bytes.Buffer
	j := newJSONLog(&buf)
	j.withCommand("schedlock locks ls")
	_, _ = j.Write([]byte("schedlock: warning: DSN file x can be read by every user\nschedlock: note: lock tables keep"))
	_, _ = j.Write([]byte(" the owner\n\nplain line"))
	j.LogError("schedlock: cannot connect", 1)
	want := []struct{ level, msg string }{
		{"WARN", "DSN file x can be read by every user"},
		{"INFO", "lock tables keep the owner"},
		{"INFO", "plain line"},
		{"ERROR", "cannot connect"},
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d records, want %d:\n%s", len(lines), len(want), buf.String())
	}
	for i, line := range lines {
		var rec logRecord
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Level != want[i].level || rec.Msg != want[i].msg || rec.Command != "schedlock locks ls" {
			t.Errorf("record %d = %+v, want %s %q", i, rec, want[i].level, want[i].msg)
		}
		if (rec.ExitCode != nil) != (i == 3) || i == 3 && *rec.ExitCode != 1 {
			t.Errorf("record %d exit_code %v", i, rec.ExitCode)
		}
	}
	if rawStderr(j) != &buf || rawStderr(&buf) != &buf {
		t.Error("rawStderr does not find the stream under the log")
	}
}

// TestLogFormatFromArgs finds the format before parsing, not in COMMAND's
// arguments.
func TestLogFormatFromArgs(t *testing.T) {
	env := func(v string) func(string) string { return func(string) string { return v } }
	cases := []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"version", "--log-format", "json"}, "", "json"},
		{[]string{"--log-format=json", "version"}, "text", "json"},
		{[]string{"version"}, "json", "json"},
		{[]string{"run", "--name", "x", "--", "job", "--log-format", "json"}, "", ""},
	}
	for _, tc := range cases {
		if got := logFormatFromArgs(tc.args, env(tc.env)); got != tc.want {
			t.Errorf("logFormatFromArgs(%q, env %q) = %q, want %q", tc.args, tc.env, got, tc.want)
		}
	}
}

// TestLogFormatCompletes offers text and json.
func TestLogFormatCompletes(t *testing.T) {
	r := runCmd(t, false, nil, "__complete", "locks", "ls", "--log-format", "")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !strings.HasPrefix(r.stdout, "text\njson\n") {
		t.Errorf("completion %q: want text and json", r.stdout)
	}
}
