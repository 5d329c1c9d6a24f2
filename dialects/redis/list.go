package redis

import (
	"context"
	"errors"
	"sort"
	"strings"

	goredis "github.com/redis/go-redis/v9"

	"github.com/schedlock/schedlock/dialects"
)

// ListLocks implements dialects.LockLister: the keys of every layout (or
// of opts.Tables), found by SCAN by prefix (never KEYS), each read by the
// inspect script in one pipeline. With no tables it lists every native
// prefix (keys "P:{…}") and every ShedLock environment ("job-lock:E:…").
// Native locks show their token; released native locks whose counter
// remains are listed as free (with opts.All). A ShedLock lock's
// environment is its Namespace ("default" included: see environment.go).
func (b *Backend) ListLocks(ctx context.Context, opts dialects.ListOptions) (*dialects.Listing, error) {
	if err := opts.CheckNames(); err != nil {
		return nil, err
	}
	listing := &dialects.Listing{Locks: []dialects.LockEntry{}, Tables: []dialects.Table{}}
	if opts.Strategy == dialects.StrategySession {
		return listing, nil
	}
	if err := b.scriptsRefused(); err != nil {
		return nil, dialects.Wrap(Name, "list", err)
	}
	layouts, err := b.layouts(opts.Tables)
	if err != nil {
		return nil, err
	}
	found := map[string][]string{} // source key of a layout → keys
	var order []layout
	seen := map[string]bool{}
	add := func(l layout, key string) {
		id := l.schema.Preset + "\x00" + l.prefix
		if !seen[id] {
			seen[id] = true
			order = append(order, l)
		}
		found[id] = append(found[id], key)
	}
	for _, l := range layouts {
		if l.prefix == "" { // every prefix of this preset
			err = scanKeys(ctx, b.client, anyPrefix(l.native), func(_ context.Context, keys []string) error {
				for _, k := range keys {
					if kl, ok := layoutOfKey(l, k); ok {
						add(kl, k)
					}
				}
				return nil
			})
		} else {
			add(l, "")
			err = scanKeys(ctx, b.client, l.match(), func(_ context.Context, keys []string) error {
				for _, k := range keys {
					add(l, k)
				}
				return nil
			})
		}
		if err != nil {
			return nil, dialects.Wrap(Name, "list", err)
		}
	}
	for _, l := range order {
		listing.Tables = append(listing.Tables, dialects.Table{Preset: l.schema.Preset, Name: l.schema.Table})
		id := l.schema.Preset + "\x00" + l.prefix
		entries, err := b.entries(ctx, l, found[id])
		if err != nil {
			return nil, dialects.Wrap(Name, "list", err)
		}
		for _, e := range entries {
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

// layouts are the layouts of tables, or with none one per preset whose
// prefix is "" (every prefix).
func (b *Backend) layouts(tables []dialects.Table) ([]layout, error) {
	if len(tables) == 0 {
		native, _ := newLayout(dialects.Table{})
		shed, _ := newLayout(dialects.Table{Preset: dialects.PresetShedlock})
		native.prefix, shed.prefix = "", ""
		return []layout{native, shed}, nil
	}
	var out []layout
	for _, t := range tables {
		// A shedlock table's name is an environment (newLayout checks it),
		// not an identifier.
		if t.Preset != dialects.PresetShedlock {
			var err error
			if t, err = dialects.ResolveAdminTable(t); err != nil {
				return nil, err
			}
		}
		l, err := newLayout(t)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// anyPrefix is the SCAN pattern of every key of a preset.
func anyPrefix(native bool) string {
	if native {
		return "*:{*}*"
	}
	return shedlockPrefix + ":*:*"
}

// layoutOfKey is the layout of key with its own prefix, for a listing of
// every prefix of base's preset.
func layoutOfKey(base layout, key string) (layout, bool) {
	l := base
	if l.native {
		i := strings.Index(key, ":{")
		if i <= 0 {
			return l, false
		}
		l.prefix = key[:i]
	} else {
		rest := strings.TrimPrefix(key, shedlockPrefix+":")
		i := strings.IndexByte(rest, ':')
		if i <= 0 {
			return l, false
		}
		l.prefix = rest[:i]
		// A ShedLock environment called "shedlock" cannot be named back:
		// the table name shedlock is the default environment, so unlock or
		// pause of such a listed lock would act on job-lock:default:NAME.
		if l.prefix == dialects.PresetShedlock {
			return l, false
		}
	}
	l.schema.Table = l.prefix
	_, _, ok := l.nameOf(key)
	return l, ok
}

// entries reads the locks of keys (all of layout l) in one pipeline of
// the inspect script by hash (ListLocks loaded it); when a server forgot
// it meanwhile (NOSCRIPT: a restart, SCRIPT FLUSH) it is loaded again and
// the pipeline sent once more.
func (b *Backend) entries(ctx context.Context, l layout, keys []string) ([]dialects.LockEntry, error) {
	out, err := b.entriesOnce(ctx, l, keys)
	if err == nil || !errors.Is(err, goredis.ErrNoScript) && !strings.HasPrefix(err.Error(), "NOSCRIPT") {
		return out, err
	}
	if err := b.loadScripts(ctx, inspectScript); err != nil {
		return nil, explain(err)
	}
	return b.entriesOnce(ctx, l, keys)
}

func (b *Backend) entriesOnce(ctx context.Context, l layout, keys []string) ([]dialects.LockEntry, error) {
	type item struct {
		name    string
		key     string
		counter bool
	}
	var items []item
	locks := map[string]bool{}
	for _, k := range keys {
		if k == "" {
			continue
		}
		name, counter, ok := l.nameOf(k)
		if !ok {
			continue
		}
		items = append(items, item{name, k, counter})
		if !counter {
			locks[name] = true
		}
	}
	if err := b.loadScripts(ctx, inspectScript); err != nil {
		return nil, dialects.Wrap(Name, "list", explain(err))
	}
	pipe := b.client.Pipeline()
	type pending struct {
		item
		reply func() (any, error)
	}
	var ps []pending
	for _, it := range items {
		if it.counter {
			if locks[it.name] {
				continue // the lock's own entry shows its token
			}
			cmd := pipe.Get(ctx, it.key)
			ps = append(ps, pending{it, func() (any, error) { return cmd.Result() }})
			continue
		}
		cmd := inspectScript.EvalSha(ctx, pipe, l.lockKeys(it.name))
		ps = append(ps, pending{it, cmd.Result})
	}
	if len(ps) == 0 {
		return nil, nil
	}
	if _, err := pipe.Exec(ctx); err != nil && !isNil(err) {
		return nil, aclFix(explain(err), b.cfg.options().user, l.aclKeys())
	}
	var out []dialects.LockEntry
	for _, p := range ps {
		res, err := p.reply()
		if isNil(err) {
			continue // gone between SCAN and now
		}
		if err != nil {
			return nil, aclFix(explain(err), b.cfg.options().user, l.aclKeys())
		}
		e := dialects.LockEntry{Name: p.name, Key: p.key, Strategy: dialects.StrategyTable, Source: l.schema.Table, Preset: l.schema.Preset}
		if !l.native {
			// The environment is the lock's namespace (environment.go).
			e.Namespace = l.prefix
		}
		if p.counter {
			e.Key = l.key(p.name)
			e.Token, e.HasToken, e.State = asInt(res), true, dialects.StateFree
			out = append(out, e)
			continue
		}
		r, _ := res.([]any)
		if len(r) < 2 {
			continue
		}
		row, exists, _ := rowOf(l, p.name, r)
		if !exists {
			continue
		}
		e.Owner, e.LockedAt, e.Until, e.DBNow = row.Owner, row.LockedAt, row.Until, row.DBNow
		e.Token, e.HasToken = row.Token, row.HasToken
		e.SetRowState(row)
		out = append(out, e)
	}
	return out, nil
}

func isNil(err error) bool { return err != nil && err.Error() == "redis: nil" }

// FindLock implements dialects.LockLister.
func (b *Backend) FindLock(ctx context.Context, name string, tables []dialects.Table) (*dialects.Listing, error) {
	return b.ListLocks(ctx, dialects.ListOptions{Tables: tables, Names: []string{dialects.QuoteGlob(name)}, All: true})
}
