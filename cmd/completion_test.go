package cmd

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/schedlock/schedlock/dialects"
)

// freeTextFlags take a value that no list can offer: a URL, a name, an
// owner, a table, a file (completed by the shell's own file names).
var freeTextFlags = map[string]bool{"dsn-file": true, "table": true, "name": true, "owner": true, "namespace": true, "key": true,
	"on-start": true, "on-success": true, "on-failure": true, "on-skip": true, "on-lost": true, "ping-url": true, "metrics-textfile": true, "by": true, "until": true,
	"targets": true, "web.config.file": true, "web.listen-address": true}

// complete runs the shell-completion request `schedlock __complete args...`
// and returns the values offered and the directive.
func complete(t *testing.T, args ...string) ([]string, cobra.ShellCompDirective) {
	t.Helper()
	r := runCmd(t, false, nil, append([]string{cobra.ShellCompRequestCmd}, args...)...)
	if r.err != nil {
		t.Fatalf("__complete %v: %v", args, r.err)
	}
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, ":") {
		t.Fatalf("__complete %v: no directive line in %q", args, r.stdout)
	}
	d, err := strconv.Atoi(last[1:])
	if err != nil {
		t.Fatalf("__complete %v: directive %q", args, last)
	}
	var values []string
	for _, l := range lines[:len(lines)-1] {
		v, _, _ := strings.Cut(l, "\t")
		values = append(values, v)
	}
	return values, cobra.ShellCompDirective(d)
}

// TestEveryEnumeratedFlagCompletes walks every command and every flag it
// takes: a flag with a value that is not free text must complete, through
// the shell-completion request itself, to a fixed list without file names;
// a comma-list flag completes again after a comma.
func TestEveryEnumeratedFlagCompletes(t *testing.T) {
	root := testRoot(t)
	checked := 0
	walkCommands(root, func(c *cobra.Command) {
		if c.Hidden || strings.HasPrefix(c.Name(), "__") {
			return
		}
		path := strings.Fields(c.CommandPath())[1:]
		visit := func(fl *pflag.Flag) {
			switch fl.Value.Type() {
			case "string", "stringSlice", "stringArray":
			default:
				return // bool, duration, int: nothing to list
			}
			if freeTextFlags[fl.Name] {
				return
			}
			checked++
			values, directive := complete(t, append(slices.Clone(path), "--"+fl.Name, "")...)
			if len(values) == 0 {
				t.Errorf("%s --%s takes one of a set of values but completes to nothing", c.CommandPath(), fl.Name)
				return
			}
			if directive&cobra.ShellCompDirectiveNoFileComp == 0 {
				t.Errorf("%s --%s completes file names too (directive %d)", c.CommandPath(), fl.Name, directive)
			}
			if fl.Name == "output" && strings.Join(values, ",") != c.Annotations[formatsAnnotation] {
				t.Errorf("%s -o completes %v, accepts %s", c.CommandPath(), values, c.Annotations[formatsAnnotation])
			}
			if fl.Value.Type() == "stringSlice" && len(values) > 1 {
				first := values[0]
				more, _ := complete(t, append(slices.Clone(path), "--"+fl.Name, first+",")...)
				if len(more) != len(values)-1 {
					t.Errorf("%s --%s %s, completes to %v, want the %d other values", c.CommandPath(), fl.Name, first, more, len(values)-1)
				}
				for _, v := range more {
					if !strings.HasPrefix(v, first+",") || v == first+","+first {
						t.Errorf("%s --%s %s, offers %q", c.CommandPath(), fl.Name, first, v)
					}
				}
			}
		}
		c.LocalFlags().VisitAll(visit)
		c.InheritedFlags().VisitAll(visit)
	})
	if checked < 12 {
		t.Errorf("only %d enumerated flags found: the walk is broken", checked)
	}
}

// TestSharedFlagsOnlyWhereTheyApply: every runnable command is in
// commandFlags, and takes -o, --dsn and --timeout exactly as listed there.
func TestSharedFlagsOnlyWhereTheyApply(t *testing.T) {
	root := testRoot(t)
	seen := map[string]bool{}
	walkCommands(root, func(c *cobra.Command) {
		path := c.CommandPath()
		sf, listed := commandFlags[path]
		seen[path] = listed
		if !listed && c.Runnable() && c != root && c.Name() != "help" && c.Parent().Name() != "completion" && c.Name() != "locks" && !strings.HasPrefix(c.Name(), "__") {
			t.Errorf("%s is not in commandFlags: say which shared flags it takes", path)
		}
		has := func(name string) bool { return c.Flags().Lookup(name) != nil }
		if has("dsn") != (sf.connects || sf.manyDSNs) || has("timeout") != sf.connects {
			t.Errorf("%s: --dsn %v, --timeout %v, want %v, %v", path, has("dsn"), has("timeout"), sf.connects || sf.manyDSNs, sf.connects)
		}
		if has("output") != (len(sf.formats) > 0) {
			t.Errorf("%s: -o %v, want %v", path, has("output"), len(sf.formats) > 0)
		}
	})
	for path := range commandFlags {
		if !seen[path] {
			t.Errorf("commandFlags lists %s, which is no command", path)
		}
	}
}

// TestEveryFlagHasHelp: every flag of every command says what it does in
// --help, and a flag that takes one of a list of values names them all.
func TestEveryFlagHasHelp(t *testing.T) {
	root := testRoot(t)
	checked := 0
	walkCommands(root, func(c *cobra.Command) {
		visit := func(fl *pflag.Flag) {
			checked++
			if strings.TrimSpace(fl.Usage) == "" {
				t.Errorf("%s --%s has no help text", c.CommandPath(), fl.Name)
			}
		}
		c.LocalFlags().VisitAll(visit)
		c.InheritedFlags().VisitAll(visit)
	})
	if checked < 50 {
		t.Errorf("only %d flags found: the walk is broken", checked)
	}
	ls, _, err := root.Find([]string{"locks", "ls"})
	if err != nil {
		t.Fatal(err)
	}
	usage := ls.Flags().Lookup("state").Usage
	for _, st := range dialects.LockStates() {
		if !strings.Contains(usage, string(st)) {
			t.Errorf("locks ls --state help %q does not name %s", usage, st)
		}
	}
}

func TestCommaListCompletion(t *testing.T) {
	values, _ := complete(t, "locks", "ls", "--state", "held,expired,")
	if want := []string{"held,expired,paused", "held,expired,waiting", "held,expired,stale", "held,expired,free"}; !slices.Equal(values, want) {
		t.Errorf("--state held,expired, completes %v, want %v", values, want)
	}
	values, _ = complete(t, "selfcheck", "--check", "table.acquire,table.con")
	if !slices.Contains(values, "table.acquire,table.contend") {
		t.Errorf("--check after a comma: %v", values)
	}
	values, _ = complete(t, "run", "--strategy", "")
	if !slices.Equal(values, []string{"session", "table", "lease"}) {
		t.Errorf("run --strategy completes %v", values)
	}
}

// --dsn completes to how the DSNs of every backend compiled in begin, the
// ones matching what is typed, with no space after; a path completes as
// file names; past the scheme nothing is offered.
func TestDSNCompletion(t *testing.T) {
	values, directive := complete(t, "run", "--dsn", "")
	for _, want := range []string{"postgres://", "mysql://", "sqlite:", "redis://", "rediss://", "etcd://", "etcds://", "zk://"} {
		if !slices.Contains(values, want) {
			t.Errorf("--dsn '' offers %v, want %s among them", values, want)
		}
	}
	if directive != cobra.ShellCompDirectiveNoSpace|cobra.ShellCompDirectiveNoFileComp {
		t.Errorf("--dsn '' directive %d, want no space and no files", directive)
	}
	if values, _ := complete(t, "locks", "ls", "--dsn", "red"); !slices.Equal(values, []string{"redis://", "rediss://"}) {
		t.Errorf("--dsn red offers %v, want redis:// and rediss://", values)
	}
	if _, directive := complete(t, "detect", "--dsn", "./"); directive != cobra.ShellCompDirectiveDefault {
		t.Errorf("--dsn ./ directive %d, want file names (a bare SQLite file)", directive)
	}
	if values, directive := complete(t, "run", "--dsn", "redis://127.0.0.1"); len(values) != 0 || directive != cobra.ShellCompDirectiveNoFileComp {
		t.Errorf("--dsn redis://127.0.0.1 offers %v (directive %d), want nothing", values, directive)
	}
}
