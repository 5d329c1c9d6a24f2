package cmd

import (
	"fmt"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/dsn"
)

// namespaceUsage is the --namespace help of the command called name.
func namespaceUsage(name string) string {
	what := map[string]string{
		"run":       "take the lock in this namespace, e.g. staging, so environments sharing a database keep apart (default x-namespace)",
		"ls":        "list only this namespace's locks, names without the namespace (default x-namespace; none: every lock)",
		"unlock":    "free the lock of this namespace (default x-namespace)",
		"selfcheck": "take the check's locks in this namespace (default x-namespace)",
		"history":   "list the runs of the lock of this namespace (default x-namespace)",
		"pause":     "pause the lock of this namespace (default x-namespace)",
		"resume":    "resume the lock of this namespace (default x-namespace)",
	}[name]
	return what
}

// namespace is the namespace the command works in: --namespace, else the
// DSN's x-namespace (already validated by dsn.Parse), else "". A bad
// --namespace is a usage error of command.
func (g *GlobalOptions) namespace(command string, target *dsn.DSN) (string, error) {
	if g.Namespace == "" {
		if target == nil {
			return "", nil
		}
		return target.Options.Namespace(), nil
	}
	if err := dialects.CheckNamespace(g.Namespace); err != nil {
		return "", &UsageError{Err: fmt.Errorf("--namespace: %w", err), Command: command}
	}
	return g.Namespace, nil
}
