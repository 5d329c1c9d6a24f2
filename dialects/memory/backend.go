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
	schema dialects.Schema // the layout it was created with
	rows   map[string]*row
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
	_ dialects.Backend     = (*Backend)(nil)
	_ dialects.LockLister  = (*Backend)(nil)
	_ dialects.LockBreaker = (*Backend)(nil)
	_ dialects.Prober      = (*Backend)(nil)
)

// Detected implements dialects.Backend.
func (b *Backend) Detected() dialects.Info {
	return dialects.Info{Dialect: Name, Product: Product, Version: "1", Banner: "schedlock memory store " + b.name}
}

// Locker implements dialects.Backend: the table strategy on t.
func (b *Backend) Locker(strategy dialects.Strategy, t dialects.Table) (dialects.Locker, error) {
	switch strategy {
	case dialects.StrategyTable:
		return b.LeaseLocker(t)
	case dialects.StrategySession:
		return nil, dialects.Wrap(Name, "session locker", fmt.Errorf("%w: the memory backend has no session locks", dialects.ErrUnsupported))
	}
	return nil, dialects.Invalidf("unknown strategy %q: use session or table", strategy)
}

// LeaseLocker returns the lease-table locker on t.
func (b *Backend) LeaseLocker(t dialects.Table) (dialects.LeaseLocker, error) {
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
// of opts.Tables), filtered as opts says. A table keeps the preset it was
// created with; one named with another preset is listed in that layout
// when it has its columns (a schedlock table read as shedlock), and is a
// *dialects.ShapeError otherwise. Liquibase's table does not exist here.
// Fencing tokens are shown where the layout has a token column.
func (b *Backend) ListLocks(_ context.Context, opts dialects.ListOptions) (*dialects.Listing, error) {
	if err := opts.CheckNames(); err != nil {
		return nil, err
	}
	b.store.mu.Lock()
	defer b.store.mu.Unlock()
	now := time.Now().UTC()
	type source struct {
		name   string
		schema dialects.Schema
	}
	var sources []source
	given := opts.Tables
	if _, known := dialects.KnownTablesZone(given); known {
		// Every table; a writer time zone means nothing to stored instants.
		given = nil
		for n, t := range b.store.tables {
			sources = append(sources, source{n, t.schema})
		}
	}
	for _, given := range given {
		t, err := dialects.ResolveAdminTable(given)
		if err != nil {
			return nil, err
		}
		tab := b.store.tables[t.Name]
		if tab == nil {
			return nil, fmt.Errorf("%w: table %s does not exist in memory store %s", dialects.ErrNoTable, t.Name, b.name)
		}
		schema, err := tab.as(t.Name, t.Preset)
		if err != nil {
			return nil, err
		}
		sources = append(sources, source{t.Name, schema})
	}
	sort.Slice(sources, func(i, j int) bool { return sources[i].name < sources[j].name })
	listing := &dialects.Listing{Locks: []dialects.LockEntry{}}
	if opts.Strategy == dialects.StrategySession {
		return listing, nil // no session locks here
	}
	for _, src := range sources {
		listing.Tables = append(listing.Tables, dialects.Table{Preset: src.schema.Preset, Name: src.name})
		hasToken := src.schema.TokenCol != ""
		for name, r := range b.store.tables[src.name].rows {
			if r.token == 0 {
				continue // never acquired
			}
			e := dialects.LockEntry{Name: name, Owner: r.owner, LockedAt: r.lockedAt, Until: r.until,
				DBNow: now, Strategy: dialects.StrategyTable, Source: src.name, Preset: src.schema.Preset}
			if hasToken {
				e.Token, e.HasToken = r.token, true
			}
			e.SetRowState(dialects.Row{Owner: r.owner, LockedAt: r.lockedAt, Until: r.until, DBNow: now})
			if opts.Keeps(e) {
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

// as is the layout of t (called name) read with preset: its own when
// preset is empty or the same, preset's when t has that preset's columns,
// else a *dialects.ShapeError.
func (t *table) as(name, preset string) (dialects.Schema, error) {
	if preset == "" || preset == t.schema.Preset {
		return t.schema, nil
	}
	if err := dialects.CheckColumns(name, preset, t.columns()); err != nil {
		return dialects.Schema{}, err
	}
	s, err := dialects.Table{Preset: preset, Name: name}.Schema()
	if err != nil { // Liquibase: checked above, never a lease table here
		return dialects.Schema{}, err
	}
	return s, nil
}

// columns are the columns of t's layout.
func (t *table) columns() []string {
	cols, _ := dialects.ExpectedColumns(t.schema.Preset)
	return cols
}

// FindLock implements dialects.LockLister.
func (b *Backend) FindLock(ctx context.Context, name string, tables []dialects.Table) (*dialects.Listing, error) {
	return b.ListLocks(ctx, dialects.ListOptions{Tables: tables, Names: []string{dialects.QuoteGlob(name)}, All: true})
}

// Liquibase implements dialects.LockBreaker: there is no Liquibase table
// in a memory store.
func (b *Backend) Liquibase(table string) (dialects.LiquibaseLock, error) {
	return nil, fmt.Errorf("%w: the memory backend has no Liquibase lock table", dialects.ErrUnsupported)
}

// LockAdmin implements dialects.LockBreaker: nil, there are no sessions.
func (b *Backend) LockAdmin() dialects.LockAdmin { return nil }
