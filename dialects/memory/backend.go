package memory

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// stores are the process's stores by name: the memory "databases".
var (
	storesMu sync.Mutex
	stores   = map[string]*store{}
)

func storeFor(name string) *store {
	storesMu.Lock()
	defer storesMu.Unlock()
	s := stores[name]
	if s == nil {
		s = &store{tables: map[string]*table{}}
		stores[name] = s
	}
	return s
}

// store is one memory database: lock tables by name.
type store struct {
	mu     sync.Mutex
	tables map[string]*table
}

// table is one lock table: its rows by lock name, and the last token each
// name was given (kept when a row is released, so tokens only grow).
type table struct {
	rows map[string]*row
}

type row struct {
	owner    string
	token    int64
	lockedAt time.Time
	until    time.Time
	lease    *lease // the live lease of this row's acquire, nil after it ended
}

// Backend is a handle on one store. It implements dialects.Backend,
// LockLister and Prober.
type Backend struct {
	store *store
	name  string
}

var (
	_ dialects.Backend    = (*Backend)(nil)
	_ dialects.LockLister = (*Backend)(nil)
	_ dialects.Prober     = (*Backend)(nil)
)

// Detected implements dialects.Backend.
func (b *Backend) Detected() dialects.Info {
	return dialects.Info{Dialect: Name, Product: Product, Version: "1", Banner: "schedlock memory store " + b.name}
}

// Locker implements dialects.Backend: the table strategy on t.
func (b *Backend) Locker(strategy dialects.Strategy, t dialects.Table) (dialects.Locker, error) {
	switch strategy {
	case dialects.StrategyTable:
		return b.TableLocker(t)
	case dialects.StrategySession:
		return nil, dialects.Wrap(Name, "session locker", fmt.Errorf("%w: the memory backend has no session locks", dialects.ErrUnsupported))
	}
	return nil, dialects.Invalidf("unknown strategy %q: use session or table", strategy)
}

// TableLocker returns the lease-table locker on t.
func (b *Backend) TableLocker(t dialects.Table) (dialects.TableLocker, error) {
	schema, err := t.Schema()
	if err != nil {
		return nil, err
	}
	return &Locker{store: b.store, schema: schema}, nil
}

// Recommend implements dialects.Backend.
func (b *Backend) Recommend() (dialects.Strategy, string) {
	return dialects.StrategyTable, "the memory backend has only lease tables"
}

// Close implements dialects.Backend. The store outlives its handles.
func (b *Backend) Close() error { return nil }

// Probe implements dialects.Prober with what the backend knows of itself.
func (b *Backend) Probe(context.Context, dialects.ProbeOptions) (dialects.Capabilities, error) {
	no := func(what string) dialects.Capability { return dialects.CapNo("the memory backend has no "+what, "") }
	now := time.Now().UTC()
	return dialects.Capabilities{
		SessionLocks: no("session locks"),
		SkipLocked:   no("rows to lock"),
		NoWait:       no("rows to lock"),
		Isolation:    dialects.CapYes("serializable: one mutex per store"),
		LockListing:  dialects.CapYes("every lease of the store is listed"),
		KillSessions: no("sessions"),
		Clock:        dialects.Clock{Server: now, Measured: true},
		Recommended: dialects.Recommendation{LockStrategy: dialects.StrategyTable, LockReason: "the memory backend has only lease tables",
			ClaimStrategy: dialects.ClaimOptimistic, ClaimReason: "no rows to claim"},
		MissingPrivileges: []dialects.MissingPrivilege{},
	}, nil
}

// ListLocks implements dialects.LockLister: the rows of every table (or
// of opts.Tables), filtered as opts says.
func (b *Backend) ListLocks(_ context.Context, opts dialects.ListOptions) (*dialects.Listing, error) {
	b.store.mu.Lock()
	defer b.store.mu.Unlock()
	now := time.Now().UTC()
	names := make([]string, 0, len(b.store.tables))
	for n := range b.store.tables {
		names = append(names, n)
	}
	if len(opts.Tables) > 0 {
		names = names[:0]
		for _, t := range opts.Tables {
			s, err := t.Schema()
			if err != nil {
				return nil, err
			}
			if b.store.tables[s.Table] == nil {
				return nil, fmt.Errorf("%w: table %s does not exist in memory store %s", dialects.ErrNoTable, s.Table, b.name)
			}
			names = append(names, s.Table)
		}
	}
	sort.Strings(names)
	listing := &dialects.Listing{Locks: []dialects.LockEntry{}}
	for _, tn := range names {
		listing.Tables = append(listing.Tables, dialects.Table{Name: tn})
		for name, r := range b.store.tables[tn].rows {
			e := dialects.LockEntry{Name: name, Owner: r.owner, Token: r.token, HasToken: true, LockedAt: r.lockedAt, Until: r.until,
				DBNow: now, Strategy: dialects.StrategyTable, Source: tn, Preset: dialects.PresetSchedlock}
			e.State = dialects.TableRowState(dialects.Row{Owner: r.owner, Until: r.until, DBNow: now})
			if keep(e, opts) {
				listing.Locks = append(listing.Locks, e)
			}
		}
	}
	sort.Slice(listing.Locks, func(i, j int) bool {
		a, c := listing.Locks[i], listing.Locks[j]
		return a.Name < c.Name || a.Name == c.Name && a.Source < c.Source
	})
	return listing, nil
}

// keep applies opts' name, state and strategy filters to e.
func keep(e dialects.LockEntry, opts dialects.ListOptions) bool {
	if opts.Strategy != "" && opts.Strategy != e.Strategy {
		return false
	}
	if len(opts.Names) > 0 && !e.MatchesName(opts.Names) {
		return false
	}
	if len(opts.States) == 0 {
		return opts.All || e.State != dialects.StateFree
	}
	for _, s := range opts.States {
		if s == e.State {
			return true
		}
	}
	return false
}

// FindLock implements dialects.LockLister.
func (b *Backend) FindLock(ctx context.Context, name string, tables []dialects.Table) (*dialects.Listing, error) {
	return b.ListLocks(ctx, dialects.ListOptions{Tables: tables, Names: []string{name}, All: true})
}
