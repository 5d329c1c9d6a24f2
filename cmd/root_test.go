package cmd

import (
	"errors"
	"strings"
	"testing"

	_ "github.com/schedlock/schedlock/dialects/all"
)

func TestUsageErrors(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown output format", []string{"-o", "xml", "version"}, `unknown output format "xml": use one of table, json, yaml`},
		{"selfcheck lists its formats", []string{"selfcheck", "-o", "xml"}, "use one of table, json, yaml, markdown, junit"},
		{"junit only on selfcheck", []string{"version", "-o", "junit"}, `unknown output format "junit"`},
		{"negative timeout", []string{"detect", "--timeout", "-1s"}, "--timeout must not be negative"},
		{"unparseable timeout", []string{"detect", "--timeout", "soon"}, `invalid argument "soon" for "--timeout"`},
		{"quiet and verbose", []string{"version", "-q", "-v"}, "--quiet and --verbose exclude each other"},
		{"unknown flag", []string{"version", "--bogus"}, "unknown flag: --bogus"},
		{"no --dsn where nothing connects", []string{"version", "--dsn", "postgres://h/db"}, "schedlock version takes no --dsn"},
		{"no -o on run", []string{"run", "-o", "json", "--name", "x", "--", "true"}, "schedlock run takes no -o/--output"},
		{"no -o on completion", []string{"completion", "bash", "-o", "json"}, "schedlock completion bash takes no -o/--output"},
		{"unknown command", []string{"bogus"}, `unknown command "bogus"`},
		{"stray argument", []string{"selfcheck", "extra"}, `unknown command "extra"`},
		{"bad strategy", []string{"selfcheck", "--dsn", "x.db", "--strategy", "advisory"}, `unknown strategy "advisory"`},
		{"bad preset", []string{"selfcheck", "--dsn", "x.db", "--preset", "quartz"}, `unknown preset "quartz"`},
		{"bad table", []string{"selfcheck", "--dsn", "x.db", "--table", "a b"}, "not a plain identifier"},
		{"bad dsn", []string{"selfcheck", "--dsn", "nosuch://h/db"}, `unknown scheme "nosuch"`},
		// Refused before the DSN is even resolved: nothing is connected to.
		{"unknown risk", []string{"selfcheck", "--dsn", "redis://127.0.0.1:1/0", "--allow-risk", "no-persistence", "--allow-risk", "no-persistance"}, `--allow-risk: invalid argument: unknown risk "no-persistance": the risks that can hand a lock to two holders are `},
	}
	for _, tc := range cases {
		for _, tty := range []bool{false, true} {
			t.Run(tc.name, func(t *testing.T) {
				r := runCmd(t, tty, nil, tc.args...)
				var usage *UsageError
				if !errors.As(r.err, &usage) {
					t.Fatalf("error %v (%T) is not a usage error", r.err, r.err)
				}
				if !strings.Contains(r.err.Error(), tc.want) {
					t.Errorf("error %q does not say %q", r.err, tc.want)
				}
				if strings.Contains(r.err.Error(), "\n") {
					t.Errorf("error spans several lines: %q", r.err)
				}
				if r.stdout != "" {
					t.Errorf("stdout not empty: %q", r.stdout)
				}
			})
		}
	}
}

func TestEveryCommandHasExamples(t *testing.T) {
	root := testRoot(t)
	queue := root.Commands()
	if root.Example == "" {
		t.Error("schedlock has no Examples")
	}
	for len(queue) > 0 {
		c := queue[0]
		queue = append(queue[1:], c.Commands()...)
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s has no Examples section", c.CommandPath())
		}
	}
}

func TestHelpShowsExamples(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"selfcheck", "--help"}, {"version", "--help"}, {"completion", "--help"}, {"completion", "bash", "--help"}} {
		r := runCmd(t, false, nil, args...)
		if r.err != nil {
			t.Fatalf("%v: %v", args, r.err)
		}
		if !strings.Contains(r.stdout, "Examples:") {
			t.Errorf("%v: help has no Examples section:\n%s", args, r.stdout)
		}
	}
}

func TestCompletionScript(t *testing.T) {
	r := runCmd(t, false, nil, "completion", "bash")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !strings.Contains(r.stdout, "__start_schedlock") {
		t.Errorf("bash completion script lacks its entry function:\n%.300s", r.stdout)
	}
}
