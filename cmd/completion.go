package cmd

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
)

// enumeratedFlags lists, by command path and flag name, the values of
// every flag that takes one of a fixed set. registerCompletions offers them
// in shell completion; TestEveryEnumeratedFlagCompletes walks the tree and
// fails for a flag that takes a value and has neither a completion nor a
// place among the free-text flags.
func enumeratedFlags() map[string]map[string][]string {
	strategies := []string{string(dialects.StrategySession), string(dialects.StrategyTable), dialects.StrategyLeaseAlias}
	return map[string]map[string][]string{
		"schedlock selfcheck": {"strategy": strategies, "preset": dialects.Presets(), "check": checkIDs(), "allow-risk": dialects.TwoHolderRiskIDs()},
		"schedlock run":       {"strategy": strategies, "preset": dialects.Presets()},
		"schedlock bench":     {"strategy": append(strategies, strategyAll), "preset": dialects.Presets()},
		"schedlock locks ls":  {"strategy": strategies, "preset": dialects.AdminPresets(), "state": lockStateNames()},
		"schedlock unlock":    {"preset": dialects.AdminPresets()},
	}
}

// registerCompletions gives every enumerated flag of the tree its values,
// where the command did not register a completion of its own. -o/--output
// gets its completion with the flag (addSharedFlags).
func registerCompletions(root *cobra.Command) {
	enums := enumeratedFlags()
	walkCommands(root, func(c *cobra.Command) {
		for name, values := range enums[c.CommandPath()] {
			if c.Flags().Lookup(name) == nil {
				continue
			}
			if _, ok := c.GetFlagCompletionFunc(name); ok {
				continue
			}
			_ = c.RegisterFlagCompletionFunc(name, valuesCompletion(values))
		}
	})
}

// valuesCompletion completes a flag with a fixed list of values. After a
// comma (--state held,ex) it completes the last item of the list, offering
// the values not in it yet, each with the items before it.
func valuesCompletion(values []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		i := strings.LastIndex(toComplete, ",")
		if i < 0 {
			return values, cobra.ShellCompDirectiveNoFileComp
		}
		head := toComplete[:i+1]
		given := map[string]bool{}
		for _, v := range strings.Split(toComplete[:i], ",") {
			given[strings.TrimSpace(v)] = true
		}
		out := make([]cobra.Completion, 0, len(values))
		for _, v := range values {
			if !given[v] {
				out = append(out, head+v)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// checkIDs are the IDs --check accepts: the whole suite, every strategy,
// on one lock table.
func checkIDs() []string {
	suite := checks.Suite(checks.Config{Strategies: dialects.Strategies, Prefix: "completion"})
	ids := make([]string, 0, len(suite))
	for _, c := range suite {
		ids = append(ids, c.ID)
	}
	return ids
}

func lockStateNames() []string {
	var names []string
	for _, s := range dialects.LockStates() {
		names = append(names, string(s))
	}
	return names
}

// dsnCompletion completes --dsn with how the DSNs of the backends compiled
// in begin (postgres://, redis://, sqlite:, …) that match what is typed,
// with no space after; a path (./, /, ~) completes as file names, for a
// bare SQLite file. Past the scheme it offers nothing: hosts, users and
// passwords are not guessed.
func dsnCompletion(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if strings.HasPrefix(toComplete, ".") || strings.HasPrefix(toComplete, "/") || strings.HasPrefix(toComplete, "~") {
		return nil, cobra.ShellCompDirectiveDefault
	}
	var out []cobra.Completion
	for _, d := range dialects.Dialects() {
		for _, s := range d.Starts {
			if strings.HasPrefix(s, toComplete) {
				out = append(out, cobra.CompletionWithDesc(s, d.Title))
			}
		}
	}
	if len(out) == 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return out, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
}
