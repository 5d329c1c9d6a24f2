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

// placeNamespace puts namespace ns into table t where t's layout keeps a
// namespace of its own — ShedLock's Redis environment: job-lock:NS:NAME —
// and returns the table and the namespace left for the lock names ("" then;
// ns and t unchanged on every other layout). A table and namespace the
// layout refuses together (two environments) are a usage error, found
// before anything is dialled.
func placeNamespace(command string, target *dsn.DSN, t dialects.Table, ns string) (dialects.Table, string, error) {
	placed, rest, err := target.PlaceNamespace(t, ns)
	if err != nil {
		return t, ns, &UsageError{Err: target.Scrub(err), Command: command}
	}
	return placed, rest, nil
}

// adminNamespace is placeNamespace for the tables of an administrative
// command (adminTables: nil for the known ones, else one), each read as
// the backend's listing resolves it (--table shedlock is the shedlock
// preset there).
func adminNamespace(command string, target *dsn.DSN, tables []dialects.Table, ns string) ([]dialects.Table, string, error) {
	if len(tables) != 1 || ns == "" {
		return tables, ns, nil
	}
	t, err := dialects.ResolveAdminTable(tables[0])
	if err != nil {
		return nil, "", &UsageError{Err: err, Command: command}
	}
	t, rest, err := placeNamespace(command, target, t, ns)
	if err != nil || rest != "" {
		return tables, ns, err
	}
	return []dialects.Table{t}, "", nil
}
