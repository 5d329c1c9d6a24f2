package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestFlagEnvSetsFlagsNotGiven: a variable sets the flag the command line
// did not give; the command line wins; an empty variable is unset.
func TestFlagEnvSetsFlagsNotGiven(t *testing.T) {
	r := runCmd(t, false, map[string]string{"SCHEDLOCK_OUTPUT": "json"}, "version")
	if r.err != nil || !json.Valid([]byte(r.stdout)) {
		t.Fatalf("SCHEDLOCK_OUTPUT=json: %v, stdout %q: want JSON", r.err, r.stdout)
	}
	r = runCmd(t, false, map[string]string{"SCHEDLOCK_OUTPUT": "json"}, "version", "-o", "yaml")
	if r.err != nil || !strings.HasPrefix(r.stdout, "version:") {
		t.Errorf("-o yaml with SCHEDLOCK_OUTPUT=json: %v, stdout %q: want YAML", r.err, r.stdout)
	}
	r = runCmd(t, false, map[string]string{"SCHEDLOCK_OUTPUT": ""}, "version")
	if r.err != nil || !strings.HasPrefix(r.stdout, "schedlock ") {
		t.Errorf("empty SCHEDLOCK_OUTPUT: %v, stdout %q: want the table", r.err, r.stdout)
	}
}

// TestFlagEnvBadValue: a value its flag refuses, or one the command
// refuses later, is one usage line naming the variable.
func TestFlagEnvBadValue(t *testing.T) {
	db := filepath.Join(t.TempDir(), "locks.db")
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want []string
	}{
		{"unparseable duration", map[string]string{"SCHEDLOCK_AT_MOST": "1hr"}, []string{"run", "--name", "x", "--", "true"},
			[]string{`$SCHEDLOCK_AT_MOST="1hr" is not a valid --at-most`, `is not a valid --at-most: not a duration: write it as 90s, 1h30m or 500ms, or in ISO 8601 as PT90S, PT1H30M or P1D;`}},
		{"unparseable bool", map[string]string{"SCHEDLOCK_QUIET": "sometimes"}, []string{"version"},
			[]string{`$SCHEDLOCK_QUIET="sometimes" is not a valid --quiet`}},
		{"negative duration", map[string]string{"SCHEDLOCK_TIMEOUT": "-1s"}, []string{"detect", "--dsn", db},
			[]string{"--timeout must not be negative", `--timeout came from $SCHEDLOCK_TIMEOUT="-1s"`}},
		{"unknown strategy", map[string]string{"SCHEDLOCK_STRATEGY": "advisory"}, []string{"run", "--dsn", db, "--name", "x", "--", "true"},
			[]string{`unknown strategy "advisory"`, `--strategy came from $SCHEDLOCK_STRATEGY="advisory"`}},
		{"unknown output format", map[string]string{"SCHEDLOCK_OUTPUT": "xml"}, []string{"version"},
			[]string{`unknown output format "xml"`, `$SCHEDLOCK_OUTPUT="xml"`}},
		{"unknown log format", map[string]string{"SCHEDLOCK_LOG_FORMAT": "yaml"}, []string{"version"},
			[]string{`--log-format must be text or json, got "yaml"`, `$SCHEDLOCK_LOG_FORMAT="yaml"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runCmd(t, false, tc.env, tc.args...)
			var usage *UsageError
			if !errors.As(r.err, &usage) {
				t.Fatalf("error %v (%T): want a usage error", r.err, r.err)
			}
			msg := r.err.Error()
			for _, want := range tc.want {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not say %q", msg, want)
				}
			}
			if strings.Contains(msg, "\n") || !strings.HasSuffix(msg, "--help')") {
				t.Errorf("error %q: want one line ending in the help hint", msg)
			}
		})
	}
}

// TestFlagEnvNeverSetsGuards: --yes, --force, --kill-session and --owner
// stay unset whatever the environment says; --dsn and --dsn-file are the
// DSN lookup's.
func TestFlagEnvNeverSetsGuards(t *testing.T) {
	env := map[string]string{}
	for name := range flagsWithoutEnv {
		env[FlagEnvName(name)] = "true"
	}
	env["SCHEDLOCK_DRY_RUN"] = "true"
	unlock := findCommand(t, "schedlock unlock")
	if err := unlock.ParseFlags(nil); err != nil {
		t.Fatal(err)
	}
	set, err := applyFlagEnv(unlock, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	for name := range flagsWithoutEnv {
		if fl := unlock.Flags().Lookup(name); fl != nil && fl.Changed {
			t.Errorf("$%s set --%s", FlagEnvName(name), name)
		}
	}
	if _, ok := set["dry-run"]; !ok || !unlock.Flags().Lookup("dry-run").Changed {
		t.Errorf("$SCHEDLOCK_DRY_RUN did not set --dry-run (set: %v)", set)
	}
}

// TestEveryFlagHasAVariable: every flag of every command is either set by
// its variable (given its own default, every flag type takes it) or listed
// in flagsWithoutEnv, and docs/environment.md names every variable-less
// flag and the variables' precedence.
func TestEveryFlagHasAVariable(t *testing.T) {
	root := testRoot(t)
	walkCommands(root, func(c *cobra.Command) {
		if !c.Runnable() {
			return
		}
		if err := c.ParseFlags(nil); err != nil {
			t.Fatal(err)
		}
		env := map[string]string{}
		c.Flags().VisitAll(func(fl *pflag.Flag) {
			fl.Changed = false // a persistent flag is shared with the parent, which set it
			if v := fl.DefValue; v != "" && v != "[]" {
				env[FlagEnvName(fl.Name)] = v
			} else {
				env[FlagEnvName(fl.Name)] = map[string]string{"string": "x", "stringSlice": "x", "stringArray": "x"}[fl.Value.Type()]
			}
		})
		set, err := applyFlagEnv(c, func(k string) string { return env[k] })
		if err != nil {
			t.Errorf("%s: %v", c.CommandPath(), err)
			return
		}
		c.Flags().VisitAll(func(fl *pflag.Flag) {
			_, skip := flagsWithoutEnv[fl.Name]
			if _, ok := set[fl.Name]; !ok && !skip {
				t.Errorf("%s --%s: $%s did not set it", c.CommandPath(), fl.Name, FlagEnvName(fl.Name))
			}
		})
	})
	doc, err := os.ReadFile(filepath.Join("..", "docs", "environment.md"))
	if err != nil {
		t.Fatal(err)
	}
	for name := range flagsWithoutEnv {
		if !strings.Contains(string(doc), "`--"+name+"`") {
			t.Errorf("docs/environment.md does not say why --%s has no variable", name)
		}
	}
	for _, want := range []string{"SCHEDLOCK_AT_MOST", "SCHEDLOCK_DSN_FILE", "DATABASE_URL", "--log-format", "ConfigMap", "EnvironmentFile"} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("docs/environment.md does not mention %s", want)
		}
	}
}

// sampleValue is a value flag fl accepts, told apart by n.
func sampleValue(fl *pflag.Flag, n int) string {
	switch fl.Value.Type() {
	case "bool":
		return "true"
	case "duration":
		return fmt.Sprintf("%ds", n)
	case "int", "int64":
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("v%d", n)
}

// TestFlagEnvYieldsToAnExcludingFlag: a flag given on the command line wins
// over the variable of a flag it excludes, as over its own; two such flags
// both typed, or both from variables, stay a usage error.
func TestFlagEnvYieldsToAnExcludingFlag(t *testing.T) {
	path, _ := pausedFile(t)
	cases := []struct {
		name    string
		env     map[string]string
		args    []string
		wantErr string // "" when it must succeed
	}{
		{"-v over $SCHEDLOCK_QUIET", map[string]string{"SCHEDLOCK_QUIET": "1"}, []string{"version", "-v"}, ""},
		{"-q over $SCHEDLOCK_VERBOSE", map[string]string{"SCHEDLOCK_VERBOSE": "true"}, []string{"version", "-q"}, ""},
		{"--for over $SCHEDLOCK_UNTIL", map[string]string{"SCHEDLOCK_UNTIL": "2030-01-01T00:00:00Z"}, []string{"pause", "nightly", "--dsn", path, "--for", "1h", "--dry-run"}, ""},
		{"--until over $SCHEDLOCK_FOR", map[string]string{"SCHEDLOCK_FOR": "1h"}, []string{"pause", "nightly", "--dsn", path, "--until", time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339), "--dry-run"}, ""},
		{"-q and -v typed", nil, []string{"version", "-q", "-v"}, "--quiet and --verbose exclude each other (see"},
		{"both from variables", map[string]string{"SCHEDLOCK_QUIET": "1", "SCHEDLOCK_VERBOSE": "1"}, []string{"version"}, `--quiet came from $SCHEDLOCK_QUIET="1", --verbose came from $SCHEDLOCK_VERBOSE="1"`},
		{"--for and --until typed", nil, []string{"pause", "nightly", "--dsn", path, "--for", "1h", "--until", "2030-01-01T00:00:00Z", "--dry-run"}, "--for and --until exclude each other"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runCmd(t, false, tc.env, tc.args...)
			if tc.wantErr == "" {
				if r.err != nil {
					t.Fatalf("error %v, want none", r.err)
				}
				return
			}
			var usage *UsageError
			if !errors.As(r.err, &usage) || !strings.Contains(r.err.Error(), tc.wantErr) {
				t.Errorf("error %v, want a usage error saying %q", r.err, tc.wantErr)
			}
		})
	}

	// Every pair in exclusiveFlags, on every command that has both: the
	// variable of the one does not set it when the other was typed.
	root := testRoot(t)
	checked := 0
	walkCommands(root, func(c *cobra.Command) {
		if !c.Runnable() {
			return
		}
		for _, x := range exclusiveFlags {
			for _, excluded := range x.excludes {
				for _, pair := range [][2]string{{x.flag, excluded}, {excluded, x.flag}} {
					name, other := pair[0], pair[1]
					fl, typed := c.Flags().Lookup(name), c.Flags().Lookup(other)
					if fl == nil || typed == nil {
						continue
					}
					checked++
					c.Flags().VisitAll(func(fl *pflag.Flag) { fl.Changed = false })
					if err := c.ParseFlags([]string{"--" + other + "=" + sampleValue(typed, 1)}); err != nil {
						t.Fatal(err)
					}
					set, err := applyFlagEnv(c, func(k string) string {
						if k == FlagEnvName(name) {
							return sampleValue(fl, 2)
						}
						return ""
					})
					if _, ok := set[name]; ok || err != nil {
						t.Errorf("%s --%s: $%s set --%s (%v)", c.CommandPath(), other, FlagEnvName(name), name, err)
					}
					// Both typed: the pair's own usage error.
					if err := c.ParseFlags([]string{"--" + name + "=" + sampleValue(fl, 2)}); err != nil {
						t.Fatal(err)
					}
					var usage *UsageError
					if err := refuseExclusive(c); !errors.As(err, &usage) || !strings.Contains(err.Error(), x.why) {
						t.Errorf("%s --%s --%s: %v, want the usage error %q", c.CommandPath(), other, name, err, x.why)
					}
				}
			}
		}
	})
	if checked < 8 {
		t.Errorf("only %d exclusive pairs found on the commands: the walk is broken", checked)
	}
}

// TestHelpNamesTheVariables: every command's help says how its flags are
// read from the environment.
func TestHelpNamesTheVariables(t *testing.T) {
	for _, args := range [][]string{{"run"}, {"locks", "ls"}, {"unlock"}, {"selfcheck"}, {"detect"}, {"bench"}, {"version"}} {
		r := runCmd(t, false, nil, append(args, "--help")...)
		if r.err != nil {
			t.Fatal(r.err)
		}
		if !strings.Contains(r.stdout, "Environment: a flag not given is read from $SCHEDLOCK_<FLAG>") || !strings.Contains(r.stdout, "docs/environment.md") {
			t.Errorf("%v --help says nothing of the environment:\n%s", args, r.stdout)
		}
	}
	r := runCmd(t, false, nil, "run", "--help")
	if !strings.Contains(r.stdout, "$SCHEDLOCK_AT_MOST") {
		t.Errorf("run --help has no $SCHEDLOCK_AT_MOST example")
	}
}

func findCommand(t *testing.T, path string) *cobra.Command {
	t.Helper()
	f := testFactory(nil, nil, t.TempDir())
	f.IO, _, _, _ = testStreams()
	var found *cobra.Command
	walkCommands(NewCmdRoot(f, &GlobalOptions{}), func(c *cobra.Command) {
		if c.CommandPath() == path {
			found = c
		}
	})
	if found == nil {
		t.Fatalf("no command %s", path)
	}
	return found
}

// TestQuoteValueMasksPasswords: a URL's password never reaches a message.
func TestQuoteValueMasksPasswords(t *testing.T) {
	got := quoteValue("https://ping:s3cret-token@hc.example.com/abc")
	if strings.Contains(got, "s3cret") || !strings.Contains(got, "ping:xxxxx@hc.example.com") {
		t.Errorf("quoteValue = %s", got)
	}
	if got := quoteValue("1hr"); got != `"1hr"` {
		t.Errorf("quoteValue(1hr) = %s", got)
	}
}
