package dynamodb

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/schedlock/schedlock/dialects"
)

// ListLocks implements dialects.LockLister: one strongly consistent Scan
// of each table (paginated: DynamoDB returns at most 1 MB a page, and
// each page is one request), filtered here; a table named by the caller
// is first checked (DescribeTable) unless opts.Resolved. Without tables it reads the
// DSN's table (its layout told by its key: name or _id), or, when the DSN
// names none, the default tables of both layouts that exist ("schedlock",
// "Shedlock"). Times are the writers' clocks; DBNow is this host's.
func (b *Backend) ListLocks(ctx context.Context, opts dialects.ListOptions) (*dialects.Listing, error) {
	if err := opts.CheckNames(); err != nil {
		return nil, err
	}
	listing := &dialects.Listing{Locks: []dialects.LockEntry{}, Tables: []dialects.Table{}}
	if opts.Strategy == dialects.StrategySession {
		return listing, nil
	}
	layouts, err := b.listLayouts(ctx, opts.Tables, opts.Resolved)
	if err != nil {
		return nil, dialects.Wrap(Name, "list", err)
	}
	for _, l := range layouts {
		items, err := b.scan(ctx, l)
		if err != nil {
			return nil, dialects.Wrap(Name, "list", err)
		}
		listing.Tables = append(listing.Tables, dialects.Table{Preset: l.schema.Preset, Name: l.table})
		now := time.Now()
		for _, it := range items {
			e := dialects.LockEntry{Name: it.name, Strategy: dialects.StrategyTable, Source: l.table, Preset: l.schema.Preset,
				Owner: it.owner, Token: it.token, HasToken: it.hasToken, LockedAt: it.lockedAt, Until: it.until, DBNow: now.UTC()}
			e.SetRowState(it.row(now))
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

// listLayouts are the tables a listing reads; tables of an earlier
// listing (resolved) are read as they are, without a DescribeTable, so a
// listing repeated every few seconds (the exporter) costs one Scan per
// table.
func (b *Backend) listLayouts(ctx context.Context, tables []dialects.Table, resolved bool) ([]layout, error) {
	if len(tables) > 0 {
		var out []layout
		for _, t := range tables {
			l, err := b.layoutOf(t)
			if err != nil {
				return nil, err
			}
			if !resolved {
				if err := (&Locker{b: b, layout: l}).check(ctx); err != nil {
					return nil, err
				}
			}
			out = append(out, l)
		}
		return out, nil
	}
	var candidates []string
	if b.cfg.table != "" {
		candidates = []string{b.cfg.table}
	} else {
		candidates = []string{defaultTable(dialects.PresetSchedlock), defaultTable(dialects.PresetShedlock)}
	}
	var out []layout
	for _, table := range candidates {
		d, err := b.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
		var nf *types.ResourceNotFoundException
		if errors.As(err, &nf) {
			continue
		}
		if err != nil {
			return nil, b.classify("describe table "+table, err)
		}
		for _, preset := range []string{dialects.PresetSchedlock, dialects.PresetShedlock} {
			l := newLayout(preset, table)
			if (&Locker{b: b, layout: l}).checkKeys(d.Table) == nil {
				out = append(out, l)
			}
		}
	}
	return out, nil
}

// scan reads every item of l's table with a strongly consistent,
// paginated Scan.
func (b *Backend) scan(ctx context.Context, l layout) ([]item, error) {
	in := &dynamodb.ScanInput{TableName: aws.String(l.table), ConsistentRead: aws.Bool(true)}
	var out []item
	p := dynamodb.NewScanPaginator(b.client, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, b.classify("scan "+l.table, err)
		}
		for _, m := range page.Items {
			if it, ok := l.decode(m); ok {
				out = append(out, it)
			}
		}
	}
	return out, nil
}

// FindLock implements dialects.LockLister.
func (b *Backend) FindLock(ctx context.Context, name string, tables []dialects.Table) (*dialects.Listing, error) {
	return b.ListLocks(ctx, dialects.ListOptions{Tables: tables, Names: []string{dialects.QuoteGlob(name)}, All: true})
}
