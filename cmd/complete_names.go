package cmd

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/schedlock/schedlock/dialects"
)

// nameCompletionTimeout bounds the listing behind a lock-name completion:
// a database that does not answer in time is offered nothing.
const nameCompletionTimeout = 3 * time.Second

// lockNameCompletion completes a lock name — the NAME of unlock, pause,
// resume and locks history, --name of run and locks ls — with the names
// the command's database lists now (every row of the lock tables it finds,
// free ones too, or those of --table/--preset; a store's keys), in the
// command's namespace, that begin with what is typed. It connects as the
// command would (--dsn, --dsn-file, $SCHEDLOCK_DSN, …) and offers nothing
// when that fails or takes longer than nameCompletionTimeout: completion
// prints no error and never hangs on a database. positional completes the
// first argument only.
func lockNameCompletion(f *Factory, g *GlobalOptions, positional bool) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		const none = cobra.ShellCompDirectiveNoFileComp
		if positional && len(args) > 0 {
			return nil, none
		}
		ctx, cancel := context.WithTimeout(context.Background(), nameCompletionTimeout)
		defer cancel()
		names, err := listedNames(ctx, f, g, c)
		if err != nil {
			return nil, none
		}
		var out []cobra.Completion
		for _, n := range names {
			if strings.HasPrefix(n, toComplete) {
				out = append(out, n)
			}
		}
		return out, none
	}
}

// listedNames lists the lock names of c's database, once each, in listing
// order: in c's namespace, those of that namespace without it; else every
// stored name as it is (NS::NAME included), as the command reads a name.
func listedNames(ctx context.Context, f *Factory, g *GlobalOptions, c *cobra.Command) ([]string, error) {
	command := c.CommandPath()
	target, err := resolveAdminDSN(f, g, command)
	if err != nil {
		return nil, err
	}
	flag := func(name string) string {
		v, _ := c.Flags().GetString(name)
		return v
	}
	tables, err := adminTables(flag("table"), flag("preset"), target, command)
	if err != nil {
		return nil, err
	}
	ns, err := g.namespace(command, target)
	if err != nil {
		return nil, err
	}
	db, err := connectAdmin(ctx, target, command)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	lister, err := lockLister(db)
	if err != nil {
		return nil, err
	}
	listing, err := lister.ListLocks(ctx, dialects.ListOptions{Tables: tables, All: true, Names: dialects.NamespacePatterns(ns, nil)})
	if err != nil {
		return nil, err
	}
	entries := listing.Locks
	if ns != "" {
		entries = dialects.ApplyNamespace(entries, ns)
	}
	seen := map[string]bool{}
	var names []string
	for _, e := range entries {
		if e.Name != "" && !seen[e.Name] {
			seen[e.Name] = true
			names = append(names, e.Name)
		}
	}
	return names, nil
}
