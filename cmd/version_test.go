package cmd

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/internal/buildinfo"
)

func TestVersion(t *testing.T) {
	old := buildinfo.Version
	buildinfo.Version = "v9.8.7"
	defer func() { buildinfo.Version = old }()
	for _, tty := range []bool{false, true} {
		r := runCmd(t, tty, nil, "version")
		if r.err != nil {
			t.Fatal(r.err)
		}
		if !strings.HasPrefix(r.stdout, "schedlock v9.8.7\n") || !strings.Contains(r.stdout, runtime.Version()) {
			t.Errorf("tty=%v: version output:\n%s", tty, r.stdout)
		}
		if r.stderr != "" {
			t.Errorf("tty=%v: stderr %q", tty, r.stderr)
		}
	}
}

func TestVersionJSON(t *testing.T) {
	r := runCmd(t, false, nil, "version", "-o", "json")
	if r.err != nil {
		t.Fatal(r.err)
	}
	var info map[string]string
	if err := json.Unmarshal([]byte(r.stdout), &info); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.stdout)
	}
	for _, k := range []string{"version", "commit", "date", "go_version", "platform"} {
		if info[k] == "" {
			t.Errorf("field %q empty in %v", k, info)
		}
	}
	if info["go_version"] != runtime.Version() {
		t.Errorf("go_version = %q", info["go_version"])
	}
}

func TestVersionYAML(t *testing.T) {
	r := runCmd(t, false, nil, "version", "-o", "yaml")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !strings.Contains(r.stdout, "go_version: "+runtime.Version()) {
		t.Errorf("yaml:\n%s", r.stdout)
	}
}

func TestVersionFlag(t *testing.T) {
	old := buildinfo.Version
	buildinfo.Version = "v9.8.7"
	defer func() { buildinfo.Version = old }()
	r := runCmd(t, false, nil, "--version")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.stdout != "schedlock v9.8.7\n" || r.stderr != "" {
		t.Errorf("--version: stdout %q, stderr %q", r.stdout, r.stderr)
	}
}

// TestVersionFlagLeavesHelpAlone: --version answers only on its own; with
// --help, and with no flag at all, the root command shows its help.
func TestVersionFlagLeavesHelpAlone(t *testing.T) {
	for _, args := range [][]string{{"--version", "--help"}, {"--help", "--version"}, {}} {
		r := runCmd(t, false, nil, args...)
		if r.err != nil {
			t.Fatalf("%v: %v", args, r.err)
		}
		if !strings.Contains(r.stdout, "Usage:\n  schedlock [command]") || strings.Count(r.stdout, "\n") < 10 {
			t.Errorf("%v: not the help:\n%s", args, r.stdout)
		}
	}
}
