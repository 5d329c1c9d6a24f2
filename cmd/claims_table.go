package cmd

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/claimtable"
	"github.com/schedlock/schedlock/internal/dsn"
	"github.com/schedlock/schedlock/internal/elide"
)

// claimRoles are the roles --column maps, in the order docs/claims.md
// lists them.
var claimRoles = []string{"id", "type", "payload", "status", "due_at", "priority", "retries", "max_retries", "owner", "claimed_until", "version", "updated_at"}

// claimOptionalRoles are the roles a table may lack.
var claimOptionalRoles = []string{"type", "payload", "priority", "max_retries", "updated_at"}

// claimStatusRoles are the states --status maps to a table's values.
var claimStatusRoles = []string{"ready", "claimed", "done", "failed"}

func addClaimTableFlags(c *cobra.Command, o *ClaimsOptions) {
	fl := c.Flags()
	fl.StringVar(&o.Table, "table", "", "task table, optionally schema.table (default "+claimtable.DefaultTable+")")
	fl.StringArrayVar(&o.Columns, "column", nil, "map a role to your table's column, ROLE=COLUMN, repeatable (roles: "+strings.Join(claimRoles, ", ")+"); an optional role with no column: ROLE=-")
	fl.StringArrayVar(&o.Status, "status", nil, "your table's status values, STATE=VALUE,… (states: "+strings.Join(claimStatusRoles, ", ")+"; default: the state's name)")
	_ = c.RegisterFlagCompletionFunc("column", prefixCompletion(claimRoles))
	_ = c.RegisterFlagCompletionFunc("status", prefixCompletion(claimStatusRoles))
}

// prefixCompletion completes ROLE= for the last item of a comma list.
func prefixCompletion(roles []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		head, last := "", toComplete
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			head, last = toComplete[:i+1], toComplete[i+1:]
		}
		var out []cobra.Completion
		for _, r := range roles {
			if strings.HasPrefix(r+"=", last) {
				out = append(out, head+r+"=")
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}

// claimTable is the task table the flags name, checked as far as it can
// be without the database, and the optional roles --column named (they
// must exist; the others are used where the table has them).
func (o *ClaimsOptions) claimTable() (claimtable.Table, []string, error) {
	t := claimtable.Table{Name: o.Table, Columns: claimtable.DefaultColumns()}
	var named []string
	for _, m := range o.Columns {
		role, col, ok := strings.Cut(m, "=")
		role, col = strings.TrimSpace(role), strings.TrimSpace(col)
		optional := slices.Contains(claimOptionalRoles, role)
		switch {
		case !ok:
			return t, nil, usageErrorf(o.Command, "--column %q: write ROLE=COLUMN, e.g. --column id=order_id", m)
		case !slices.Contains(claimRoles, role):
			return t, nil, usageErrorf(o.Command, "--column %q: unknown role %q; roles: %s", m, role, elide.Whole(strings.Join(claimRoles, ", ")))
		case slices.Contains(named, role):
			return t, nil, usageErrorf(o.Command, "--column %s is given twice", role)
		case col == "" && !optional:
			return t, nil, usageErrorf(o.Command, "--column %q: the %s column is missing; %s is required (the optional roles are %s)", m, role, role, strings.Join(claimOptionalRoles, ", "))
		}
		setColumn(&t.Columns, role, col)
		named = append(named, role)
	}
	statuses, err := o.claimStatuses()
	if err != nil {
		return t, nil, err
	}
	t.Statuses = statuses
	resolved, err := t.Resolve()
	if err != nil {
		return t, nil, &UsageError{Err: err, Command: o.Command}
	}
	return resolved, named, nil
}

// claimStatuses parses --status STATE=VALUE,…; a state not given keeps
// its default value.
func (o *ClaimsOptions) claimStatuses() (claimtable.Statuses, error) {
	var s claimtable.Statuses
	fields := map[string]*string{"ready": &s.Ready, "claimed": &s.Claimed, "done": &s.Done, "failed": &s.Failed}
	given := map[string]string{} // value → state
	for _, arg := range o.Status {
		for _, item := range strings.Split(arg, ",") {
			state, value, ok := strings.Cut(item, "=")
			state, value = strings.TrimSpace(state), strings.TrimSpace(value)
			p, known := fields[state]
			switch {
			case !ok:
				return s, usageErrorf(o.Command, "--status %q: write STATE=VALUE, e.g. --status ready=WAIT,claimed=RUNNING,done=DONE,failed=FAILED", item)
			case !known:
				return s, usageErrorf(o.Command, "--status %q: unknown state %q; states: %s", item, state, strings.Join(claimStatusRoles, ", "))
			case value == "":
				return s, usageErrorf(o.Command, "--status %q: the value of %s is missing", item, state)
			case *p != "":
				return s, usageErrorf(o.Command, "--status %s is given twice", state)
			}
			if other, dup := given[value]; dup {
				return s, usageErrorf(o.Command, "--status: %s and %s both map to %q; each state needs a value of its own", other, state, value)
			}
			given[value] = state
			*p = value
		}
	}
	return s, nil
}

// setColumn maps role to col; "", "-" or "none" maps an optional role to
// no column.
func setColumn(c *claimtable.Columns, role, col string) {
	if col == "-" || col == "none" {
		col = ""
	}
	fields := map[string]*string{"id": &c.ID, "type": &c.Type, "payload": &c.Payload, "status": &c.Status, "due_at": &c.DueAt,
		"priority": &c.Priority, "retries": &c.Retries, "max_retries": &c.MaxRetries, "owner": &c.Owner,
		"claimed_until": &c.ClaimedUntil, "version": &c.Version, "updated_at": &c.UpdatedAt}
	*fields[role] = col
}

// open connects and returns the claimer of the flags' table. It reads the
// table's columns first: an optional role the flags did not name is used
// only where the table has its default column; every mapped column must
// exist, or it is a usage error before anything is written.
// Administration needs no probe: it runs the optimistic strategy's
// statements, which every dialect has.
func (o *ClaimsOptions) open(ctx context.Context) (*claimtable.Claimer, dialects.Backend, *dsn.DSN, error) {
	table, named, err := o.claimTable()
	if err != nil {
		return nil, nil, nil, err
	}
	target, err := resolveAdminDSN(o.Factory, o.Global, o.Command)
	if err != nil {
		return nil, nil, nil, err
	}
	backend, err := connectAdmin(ctx, target, o.Command)
	if err != nil {
		return nil, nil, nil, err
	}
	opts := claimtable.Options{Strategy: dialects.ClaimOptimistic}
	cl, err := claimtable.Open(ctx, backend, table, opts) // refuses a backend without rows
	var have []string
	if err == nil {
		have, err = claimtable.ReadColumns(backend)(ctx, table.Name)
	}
	if err == nil {
		table.Columns = table.Columns.WithoutAbsent(have, named...)
		cl, err = claimtable.Open(ctx, backend, table, opts)
	}
	if err == nil {
		err = cl.CheckColumns(ctx, func(context.Context, string) ([]string, error) { return have, nil })
	}
	if err != nil {
		_ = backend.Close()
		return nil, nil, nil, adminError(err, target, o.Command)
	}
	return cl, backend, target, nil
}

// unmappedNote says how many rows hold a status value outside the
// mapping, "" when none does (or they cannot be counted): a listing
// without a single claimed row may be reading a table whose values were
// not mapped.
func unmappedNote(ctx context.Context, cl *claimtable.Claimer) string {
	n, least, err := cl.Unmapped(ctx)
	if err != nil || n == 0 {
		return ""
	}
	s := cl.Table().Statuses
	return fmt.Sprintf("%d rows of %s have a status other than %q, %q, %q and %q (e.g. %q): give the table's values with --status ready=…,claimed=…,done=…,failed=…",
		n, cl.Table().Name, s.Ready, s.Claimed, s.Done, s.Failed, least)
}
