package mongodb

import (
	"context"
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/schedlock/schedlock/dialects"
)

var _ dialects.LockLister = (*Backend)(nil)

// ListLocks implements dialects.LockLister: one find per collection, of
// opts.Tables or, with none, of the native collection and ShedLock's
// "shedLock" (a collection that does not exist lists nothing). Names
// without glob characters are looked up by _id on the server; patterns
// are matched here.
func (b *Backend) ListLocks(ctx context.Context, opts dialects.ListOptions) (*dialects.Listing, error) {
	if err := opts.CheckNames(); err != nil {
		return nil, err
	}
	listing := &dialects.Listing{Locks: []dialects.LockEntry{}, Tables: []dialects.Table{}}
	if opts.Strategy == dialects.StrategySession {
		return listing, nil
	}
	layouts, err := b.listLayouts(opts.Tables)
	if err != nil {
		return nil, err
	}
	filter := bson.D{}
	if ids, ok := exactNames(opts.Names); ok {
		filter = bson.D{{Key: fieldName, Value: bson.D{{Key: "$in", Value: ids}}}}
	}
	for _, l := range layouts {
		now := b.serverNow()
		cur, err := b.db.Collection(l.coll).Find(ctx, filter)
		if err != nil {
			return nil, dialects.Wrap(Name, "list", b.failed("find in "+l.coll, err))
		}
		listing.Tables = append(listing.Tables, dialects.Table{Preset: l.schema.Preset, Name: l.coll})
		for cur.Next(ctx) {
			d, ok := decode(cur.Current)
			if !ok {
				continue
			}
			e := dialects.LockEntry{Name: d.name, Strategy: dialects.StrategyTable, Source: l.coll, Preset: l.schema.Preset,
				Owner: d.owner, LockedAt: d.lockedAt, Until: d.until, DBNow: now, Token: d.token, HasToken: d.hasToken}
			e.SetRowState(d.row(now))
			if opts.Keeps(e) {
				listing.Locks = append(listing.Locks, e)
			}
		}
		err = cur.Err()
		_ = cur.Close(context.WithoutCancel(ctx))
		if err != nil {
			return nil, dialects.Wrap(Name, "list", b.failed("find in "+l.coll, err))
		}
	}
	sort.Slice(listing.Locks, func(i, j int) bool {
		a, c := listing.Locks[i], listing.Locks[j]
		return a.Name < c.Name || a.Name == c.Name && a.Source < c.Source
	})
	return listing, nil
}

// listLayouts are the layouts of tables, or with none the native and the
// shedlock default collections.
func (b *Backend) listLayouts(tables []dialects.Table) ([]layout, error) {
	if len(tables) == 0 {
		tables = []dialects.Table{{}, {Preset: dialects.PresetShedlock}}
	}
	var out []layout
	seen := map[string]bool{}
	for _, t := range tables {
		if t.Preset == "" && strings.EqualFold(t.Name, dialects.PresetShedlock) {
			t.Preset = dialects.PresetShedlock
		}
		l, err := b.layoutOf(t)
		if err != nil {
			return nil, err
		}
		if !seen[l.coll] {
			seen[l.coll] = true
			out = append(out, l)
		}
	}
	return out, nil
}

// exactNames returns names when none holds a glob character.
func exactNames(names []string) ([]string, bool) {
	if len(names) == 0 {
		return nil, false
	}
	for _, n := range names {
		if strings.ContainsAny(n, `*?[\`) {
			return nil, false
		}
	}
	return names, true
}

// FindLock implements dialects.LockLister.
func (b *Backend) FindLock(ctx context.Context, name string, tables []dialects.Table) (*dialects.Listing, error) {
	if err := dialects.CheckName(name); err != nil {
		return nil, err
	}
	return b.ListLocks(ctx, dialects.ListOptions{Tables: tables, Names: []string{dialects.QuoteGlob(name)}, All: true})
}
