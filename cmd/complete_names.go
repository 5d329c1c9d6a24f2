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
// command's namespace, that begin with what is typed. positional
// completes the first argument only; preset, when set, is the only layout
// the command reads (locks history: the native table). See listedLocks for
// how it connects.
func lockNameCompletion(f *Factory, g *GlobalOptions, positional bool, preset string) cobra.CompletionFunc {
	names := listedCompletion(f, g, listScope{own: true, preset: preset}, func(_ []string, l *dialects.Listing) []string {
		return lockValues(l, func(e dialects.LockEntry) string { return e.Name })
	})
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if positional && len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return names(c, args, toComplete)
	}
}

// pauseNameCompletion completes the NAME of pause with the locks a pause
// can hold — lease-table locks (not Liquibase's, which has no lease end),
// on a backend that keeps pauses — and the NAME of resume (resume) with
// the paused ones only.
func pauseNameCompletion(f *Factory, g *GlobalOptions, resume bool) cobra.CompletionFunc {
	names := listedCompletion(f, g, listScope{own: true, pauser: true}, func(_ []string, l *dialects.Listing) []string {
		return lockValues(l, func(e dialects.LockEntry) string {
			switch {
			case resume && e.State != dialects.StatePaused:
				return ""
			case e.Strategy != dialects.StrategyTable || e.Preset == dialects.PresetLiquibase:
				return ""
			}
			return e.Name
		})
	})
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return names(c, args, toComplete)
	}
}

// lockKeyCompletion completes unlock's --key with the keys of the session
// locks held now, as locks ls shows them.
func lockKeyCompletion(f *Factory, g *GlobalOptions) cobra.CompletionFunc {
	return listedCompletion(f, g, listScope{sessions: true}, func(_ []string, l *dialects.Listing) []string {
		return lockValues(l, func(e dialects.LockEntry) string {
			if e.Strategy != dialects.StrategySession || e.State != dialects.StateHeld {
				return ""
			}
			return e.Key
		})
	})
}

// lockOwnerCompletion completes unlock's --owner with the owner the
// database lists for the lock NAME names (the first argument).
func lockOwnerCompletion(f *Factory, g *GlobalOptions) cobra.CompletionFunc {
	owners := listedCompletion(f, g, listScope{own: true}, func(args []string, l *dialects.Listing) []string {
		return lockValues(l, func(e dialects.LockEntry) string {
			if e.Name != args[0] {
				return ""
			}
			return e.Owner
		})
	})
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) == 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return owners(c, args, toComplete)
	}
}

// lockTableCompletion completes --table with the lock tables the
// command's database has (every known table that exists; a store's key
// prefixes), whatever --table and --preset say; only those of preset when
// it is set (locks history: native tables).
func lockTableCompletion(f *Factory, g *GlobalOptions, preset string) cobra.CompletionFunc {
	return listedCompletion(f, g, listScope{}, func(_ []string, l *dialects.Listing) []string {
		tables := make([]string, 0, len(l.Tables))
		for _, t := range l.Tables {
			if preset == "" || t.Preset == preset {
				tables = append(tables, t.Name)
			}
		}
		return tables
	})
}

// listScope is which tables a completion lists: every known table that
// exists, or (own) those of the command's --table and --preset, preset
// standing for a --preset the command does not take; sessions lists the
// session locks only; pauser lists nothing on a backend that cannot keep
// a pause.
type listScope struct {
	own      bool
	preset   string
	sessions bool
	pauser   bool
}

// listedCompletion offers, once each and in their order, the non-empty
// values that values takes from what the command's database lists (in
// the tables of scope) and that begin with what is typed.
func listedCompletion(f *Factory, g *GlobalOptions, scope listScope, values func(args []string, l *dialects.Listing) []string) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		const none = cobra.ShellCompDirectiveNoFileComp
		ctx, cancel := context.WithTimeout(context.Background(), nameCompletionTimeout)
		defer cancel()
		listing, err := listedLocks(ctx, f, g, c, scope)
		if err != nil {
			return nil, none
		}
		seen := map[string]bool{}
		var out []cobra.Completion
		for _, v := range values(args, listing) {
			if v != "" && !seen[v] && strings.HasPrefix(v, toComplete) {
				seen[v] = true
				out = append(out, v)
			}
		}
		return out, none
	}
}

// lockValues is pick of every lock of l.
func lockValues(l *dialects.Listing, pick func(dialects.LockEntry) string) []string {
	out := make([]string, 0, len(l.Locks))
	for _, e := range l.Locks {
		out = append(out, pick(e))
	}
	return out
}

// listedLocks lists the locks of c's database in the tables of scope: in
// c's namespace, that namespace's with their names without it;
// else every lock with its stored name (NS::NAME included), as the command
// reads a name. It connects as the command would (--dsn, --dsn-file,
// $SCHEDLOCK_DSN, …); the caller offers nothing when it fails or ctx ends
// (nameCompletionTimeout), so completion prints no error and never hangs
// on a database.
func listedLocks(ctx context.Context, f *Factory, g *GlobalOptions, c *cobra.Command, scope listScope) (*dialects.Listing, error) {
	command := c.CommandPath()
	target, err := resolveAdminDSN(f, g, command)
	if err != nil {
		return nil, err
	}
	flag := func(name string) string {
		v, _ := c.Flags().GetString(name)
		return v
	}
	var tables []dialects.Table
	if scope.own {
		if tables, err = adminTables(flag("table"), firstNonEmpty(scope.preset, flag("preset")), target, command); err != nil {
			return nil, err
		}
	}
	ns, err := g.namespace(command, target)
	if err != nil {
		return nil, err
	}
	tables, nameNS, err := adminNamespace(command, target, tables, ns)
	if err != nil {
		return nil, err
	}
	db, err := connectAdmin(ctx, target, command)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if _, ok := db.(dialects.Pauser); scope.pauser && !ok {
		return &dialects.Listing{}, nil
	}
	lister, err := lockLister(db)
	if err != nil {
		return nil, err
	}
	opts := dialects.ListOptions{Tables: tables, All: true, Names: dialects.NamespacePatterns(nameNS, nil)}
	if scope.sessions {
		opts.Strategy = dialects.StrategySession
	}
	listing, err := lister.ListLocks(ctx, opts)
	if err != nil {
		return nil, err
	}
	if ns != "" {
		listing.Locks = dialects.ApplyNamespace(listing.Locks, ns)
	}
	return listing, nil
}
