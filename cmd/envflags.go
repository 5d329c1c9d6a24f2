package cmd

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/schedlock/schedlock/internal/dsn"
	"github.com/schedlock/schedlock/internal/elide"
)

// EnvPrefix starts the environment variable of every flag: --at-most is
// also $SCHEDLOCK_AT_MOST (see FlagEnvName).
const EnvPrefix = "SCHEDLOCK_"

// flagsWithoutEnv are the flags no environment variable sets, and why.
// --dsn and --dsn-file have theirs, $SCHEDLOCK_DSN and $SCHEDLOCK_DSN_FILE,
// read by dsn.Resolve in its own order (with $DATABASE_URL).
var flagsWithoutEnv = map[string]string{
	"help":         "a question to the command, not a setting",
	"version":      "a question to the command, not a setting",
	"dsn":          "read as $SCHEDLOCK_DSN by the DSN lookup",
	"dsn-file":     "read as $SCHEDLOCK_DSN_FILE by the DSN lookup",
	"yes":          "a confirmation must be typed, never configured",
	"force":        "bypassing an owner check must be typed, never configured",
	"kill-session": "terminating a session must be typed, never configured",
	"owner":        "$SCHEDLOCK_OWNER is what run gives its command",
}

// exclusiveFlags are the flags a command refuses together: flag with any
// of excludes, on every command that has both. It is the one place they
// are written: refuseExclusive turns a pair given together into the usage
// error why, and a variable does not set a flag when the command line gave
// one it excludes — the flag given wins over the variable, as it would over
// the variable of the same flag, instead of the two clashing.
var exclusiveFlags = []struct {
	flag     string
	excludes []string
	why      string
}{
	{"quiet", []string{"verbose"}, "--quiet and --verbose exclude each other"},
	{"no-color", []string{"color"}, "--no-color and --color exclude each other: give one"},
	{"for", []string{"until"}, "--for and --until exclude each other: give one"}, // pause
	{"duration", []string{"cycles"}, "give --duration or --cycles, not both"},    // bench
	{"key", []string{"name"}, "give --name or --key, not both"},                  // run, locks ls
	{"claims", []string{"locks", "leases", "wait", "preset", "table"}, "--claims measures claims on a task table of its own: --locks, --leases, --wait, --preset and --table measure locks"},
}

// excludedBy lists the flags that exclude the flag called name.
func excludedBy(name string) []string {
	var out []string
	for _, x := range exclusiveFlags {
		switch {
		case x.flag == name:
			out = append(out, x.excludes...)
		case slices.Contains(x.excludes, name):
			out = append(out, x.flag)
		}
	}
	return out
}

// refuseExclusive is the usage error of the first pair of exclusiveFlags
// that c was given together (on the command line or by variables), or nil.
func refuseExclusive(c *cobra.Command) error {
	for _, x := range exclusiveFlags {
		if !c.Flags().Changed(x.flag) {
			continue
		}
		if slices.ContainsFunc(x.excludes, c.Flags().Changed) {
			return usageErrorf(c.CommandPath(), "%s", elide.Whole(x.why))
		}
	}
	return nil
}

// FlagEnvName is the environment variable of the flag called name:
// EnvPrefix and the name in capitals with '-' and '.' as '_' ("at-most" →
// "SCHEDLOCK_AT_MOST").
func FlagEnvName(name string) string {
	return EnvPrefix + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(name))
}

// envFlags are the flags of one command that the environment set, by
// flag name: the variable and its value.
type envFlags map[string][2]string

// applyFlagEnv sets every flag of c that the command line did not give and
// whose variable getenv returns non-empty, as if it had been given, unless
// the command line gave a flag it excludes (exclusiveFlags). A value the
// flag refuses is a usage error naming the variable.
func applyFlagEnv(c *cobra.Command, getenv func(string) string) (envFlags, error) {
	given := map[string]bool{}
	c.Flags().Visit(func(fl *pflag.Flag) { given[fl.Name] = true })
	set := envFlags{}
	var err error
	c.Flags().VisitAll(func(fl *pflag.Flag) {
		if err != nil || fl.Changed {
			return
		}
		if _, skip := flagsWithoutEnv[fl.Name]; skip {
			return
		}
		if slices.ContainsFunc(excludedBy(fl.Name), func(other string) bool { return given[other] }) {
			return
		}
		name := FlagEnvName(fl.Name)
		value := getenv(name)
		if value == "" {
			return
		}
		if e := c.Flags().Set(fl.Name, value); e != nil {
			var why any = flagValueError(e)
			if _, ok := fl.Value.(*durationValue); ok {
				why = elide.Whole(flagValueError(e)) // says what is wrong, never the value
			}
			err = usageErrorf(c.CommandPath(), "$%s=%s is not a valid --%s: %s; fix or unset the variable (--%s on the command line wins over it)",
				name, quoteValue(value), fl.Name, why, fl.Name)
			return
		}
		set[fl.Name] = [2]string{name, value}
	})
	return set, err
}

// flagValueError is why pflag refused a value, without pflag's own
// "invalid argument … for … flag:" lead, which names the flag, not the
// variable.
func flagValueError(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, " flag: "); i >= 0 {
		return msg[i+len(" flag: "):]
	}
	return msg
}

// quoteValue quotes an environment value for a message, cut short when
// long, with the password of a URL masked (a hook URL may carry one).
func quoteValue(v string) string {
	const max = 60
	if u, err := url.Parse(v); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), dsn.Mask)
			v = u.String()
		}
	}
	if r := []rune(v); len(r) > max {
		v = string(r[:max]) + "…"
	}
	return fmt.Sprintf("%q", v)
}

// explain adds, to a usage error that names a flag the environment set,
// where that flag's value came from.
func (e envFlags) explain(err error) error {
	if len(e) == 0 || err == nil {
		return err
	}
	msg := err.Error()
	names := make([]string, 0, len(e))
	for name := range e {
		names = append(names, name)
	}
	sort.Strings(names)
	var from []string
	for _, name := range names {
		value := e[name][1]
		if mentionsFlag(msg, name) || strings.Contains(msg, strconv.Quote(value)) || name == "output" && strings.Contains(msg, "output format") {
			from = append(from, fmt.Sprintf("--%s came from $%s=%s", name, e[name][0], quoteValue(value)))
		}
	}
	if len(from) == 0 {
		return err
	}
	note := strings.Join(from, ", ")
	var usage *UsageError
	if errors.As(err, &usage) && usage == err { // before the "see --help" hint
		return &UsageError{Err: &envExplained{err: usage.Err, note: note}, Command: usage.Command}
	}
	return &envExplained{err: err, note: note}
}

// mentionsFlag reports whether msg names --name (not --name-more).
func mentionsFlag(msg, name string) bool {
	flag := "--" + name
	for i := 0; ; {
		j := strings.Index(msg[i:], flag)
		if j < 0 {
			return false
		}
		end := i + j + len(flag)
		if end == len(msg) || !(msg[end] == '-' || msg[end] >= 'a' && msg[end] <= 'z') {
			return true
		}
		i = end
	}
}

// envExplained is an error with the variables that set its flags.
type envExplained struct {
	err  error
	note string
}

func (e *envExplained) Error() string { return e.err.Error() + " (" + e.note + ")" }
func (e *envExplained) Unwrap() error { return e.err }

// envHelpExamples are the flags envHelp prefers for its example, in order.
var envHelpExamples = []string{"at-most", "strategy", "output"}

// envHelp is the paragraph every command's help gets about the variables
// of its flags: an example from the command's own flags, and the flags of
// the command that no variable sets.
func envHelp(c *cobra.Command) string {
	var names, typedOnly []string
	c.LocalFlags().VisitAll(func(fl *pflag.Flag) {
		switch fl.Name {
		case "help", "version", "dsn", "dsn-file":
		default:
			if _, skip := flagsWithoutEnv[fl.Name]; skip {
				typedOnly = append(typedOnly, "--"+fl.Name)
			} else {
				names = append(names, fl.Name)
			}
		}
	})
	sort.Strings(names)
	example := "log-format"
	if len(names) > 0 {
		example = names[0]
	}
	for _, preferred := range envHelpExamples {
		if slices.Contains(names, preferred) {
			example = preferred
			break
		}
	}
	text := fmt.Sprintf("Environment: a flag not given is read from $%s<FLAG>, its name in capitals with _ for - (--%s from $%s), so that a systemd EnvironmentFile or a Kubernetes ConfigMap can configure it; a flag given wins, an empty variable counts as unset.",
		EnvPrefix, example, FlagEnvName(example))
	if len(typedOnly) > 0 {
		sort.Strings(typedOnly)
		list := strings.Join(typedOnly, ", ")
		if i := strings.LastIndex(list, ", "); i >= 0 {
			list = list[:i] + " or " + list[i+2:]
		}
		text += " No variable sets " + list + "."
	}
	return wrapText(text+" See docs/environment.md.", 76)
}

// wrapText breaks text into lines of at most width columns at spaces.
func wrapText(text string, width int) string {
	var b strings.Builder
	line := 0
	for i, word := range strings.Fields(text) {
		switch {
		case i == 0:
		case line+1+len(word) > width:
			b.WriteByte('\n')
			line = 0
		default:
			b.WriteByte(' ')
			line++
		}
		b.WriteString(word)
		line += len(word)
	}
	return b.String()
}

// addEnvHelp appends envHelp to the help of every runnable command under
// root.
func addEnvHelp(root *cobra.Command) {
	walkCommands(root, func(c *cobra.Command) {
		if !c.Runnable() || c.Name() == "help" || c.Name() == cobra.ShellCompRequestCmd || c.Name() == cobra.ShellCompNoDescRequestCmd {
			return
		}
		if c.Long == "" {
			c.Long = c.Short + "."
		}
		c.Long = strings.TrimRight(c.Long, "\n") + "\n\n" + envHelp(c)
	})
}
