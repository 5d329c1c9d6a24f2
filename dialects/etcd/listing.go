package etcd

import (
	"context"
	"fmt"
	"sort"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/schedlock/schedlock/dialects"
)

// ListLocks implements dialects.LockLister: one prefix read of the DSN's
// lock space (or of the tables opts names), grouped by lock. The key with
// the lowest create revision of a lock is its holder (held: etcd ends a
// dead holder's key with its lease, so there are no zombies to tell
// apart), and the others (concurrency.Mutex clients such as `etcdctl lock`
// queueing behind it) are waiting. etcd keeps nothing of a released lock,
// so no lock is ever listed as free or expired.
func (b *Backend) ListLocks(ctx context.Context, opts dialects.ListOptions) (*dialects.Listing, error) {
	if err := opts.CheckNames(); err != nil {
		return nil, err
	}
	if opts.Strategy == dialects.StrategySession {
		return &dialects.Listing{Locks: []dialects.LockEntry{}, Tables: []dialects.Table{}}, nil
	}
	tables := map[string]bool{}
	for _, t := range opts.Tables {
		s, err := b.schema(t)
		if err != nil {
			return nil, err
		}
		tables[s.Table] = true
	}
	resp, err := b.cli.Get(ctx, b.cfg.root, clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	if err != nil {
		return nil, dialects.Wrap(Name, "list", b.denied(fmt.Errorf("read the keys under %s: %w", quotePrefix(b.cfg.root), err)))
	}
	now := time.Now().UTC()
	type lockID struct{ table, name string }
	groups := map[lockID][]*keyState{}
	for _, kv := range resp.Kvs {
		p, ok := parseKey(b.cfg.root, string(kv.Key))
		if !ok || len(tables) > 0 && !tables[p.table] {
			continue
		}
		k := &keyState{key: string(kv.Key), lease: clientv3.LeaseID(kv.Lease), create: kv.CreateRevision, mod: kv.ModRevision}
		k.value, k.ours = decodeValue(kv.Value)
		id := lockID{p.table, p.name}
		groups[id] = append(groups[id], k)
	}
	listing := &dialects.Listing{Locks: []dialects.LockEntry{}, Tables: []dialects.Table{}}
	seen := map[string]bool{}
	for id, keys := range groups {
		if !seen[id.table] {
			seen[id.table] = true
			listing.Tables = append(listing.Tables, dialects.Table{Preset: dialects.PresetSchedlock, Name: id.table})
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i].create < keys[j].create })
		for i, k := range keys {
			e, err := b.entry(ctx, id.table, id.name, k, i == 0, now)
			if err != nil {
				return nil, dialects.Wrap(Name, "list", b.denied(err))
			}
			if opts.Keeps(e) {
				listing.Locks = append(listing.Locks, e)
			}
		}
	}
	sort.Slice(listing.Tables, func(i, j int) bool { return listing.Tables[i].Name < listing.Tables[j].Name })
	sort.Slice(listing.Locks, func(i, j int) bool {
		a, c := listing.Locks[i], listing.Locks[j]
		if a.Name != c.Name {
			return a.Name < c.Name
		}
		if a.Source != c.Source {
			return a.Source < c.Source
		}
		return a.Token < c.Token
	})
	listing.Notes = append(listing.Notes, "etcd keeps nothing of a released lock: free and expired locks have no key and are not listed")
	return listing, nil
}

// entry is the listing entry of key k of the lock name in table.
func (b *Backend) entry(ctx context.Context, table, name string, k *keyState, holds bool, now time.Time) (dialects.LockEntry, error) {
	e := dialects.LockEntry{Name: name, Key: k.key, Owner: k.owner(), Token: k.create, HasToken: true, DBNow: now,
		Strategy: dialects.StrategyTable, Source: table, Preset: dialects.PresetSchedlock}
	if !holds {
		e.State = dialects.StateWaiting
		if k.ours {
			e.LockedAt = k.value.LockedAt.UTC()
		}
		return e, nil
	}
	r, err := b.row(ctx, name, k, now)
	if err != nil {
		return e, err
	}
	// Held while the key exists, never stale: whether the holder's own
	// lease end has passed could only be judged on this host's clock
	// against the holder's, and a live lock read as stale would be freed
	// without the owner named. A dead holder's key is gone by its TTL.
	e.LockedAt, e.Until, e.State = r.LockedAt, r.Until, dialects.StateHeld
	return e, nil
}

// FindLock implements dialects.LockLister: the keys of the lock called
// name exactly (in every table of the DSN's lock space, or in tables).
func (b *Backend) FindLock(ctx context.Context, name string, tables []dialects.Table) (*dialects.Listing, error) {
	if err := dialects.CheckName(name); err != nil {
		return nil, err
	}
	listing, err := b.ListLocks(ctx, dialects.ListOptions{Tables: tables, All: true})
	if err != nil {
		return nil, err
	}
	listing.Locks = dialects.KeepNamed(listing.Locks, name)
	return listing, nil
}

// Liquibase implements dialects.LockBreaker: etcd has no Liquibase table.
func (b *Backend) Liquibase(string) (dialects.LiquibaseLock, error) {
	return nil, fmt.Errorf("%w: etcd has no Liquibase lock table", dialects.ErrUnsupported)
}

// LockAdmin implements dialects.LockBreaker: nil, etcd has no session
// locks (a lock's lease is freed by unlock, guarded, or by its TTL).
func (b *Backend) LockAdmin() dialects.LockAdmin { return nil }
