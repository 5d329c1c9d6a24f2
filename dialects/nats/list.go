package nats

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/schedlock/schedlock/dialects"
)

// listTable is one table a listing reads: a layout in a bucket.
type listTable struct {
	table  dialects.Table // as the listing names it (Preset, Name)
	bucket string
	shed   bool
}

// ListLocks implements dialects.LockLister: the keys of each bucket read
// at once — its stream info (which holds the server's clock) and the last
// value of every key through a consumer of its own (create, one fetch,
// delete): four requests per bucket, however many locks it holds. With
// no tables it reads the DSN's bucket (schedlock layout) and ShedLock's
// bucket (shedlock-locks, or the DSN's when it names one); a bucket that
// does not exist is skipped. Deleted keys (released locks) are not
// listed; a ShedLock node's lock has no owner.
func (b *Backend) ListLocks(ctx context.Context, opts dialects.ListOptions) (*dialects.Listing, error) {
	if err := opts.CheckNames(); err != nil {
		return nil, err
	}
	listing := &dialects.Listing{Locks: []dialects.LockEntry{}, Tables: []dialects.Table{}}
	if opts.Strategy == dialects.StrategySession {
		return listing, nil
	}
	tables, err := b.listTables(opts.Tables)
	if err != nil {
		return nil, err
	}
	byBucket := map[string][]listTable{}
	var order []string
	for _, t := range tables {
		if _, ok := byBucket[t.bucket]; !ok {
			order = append(order, t.bucket)
		}
		byBucket[t.bucket] = append(byBucket[t.bucket], t)
	}
	for _, bucket := range order {
		entries, found, err := b.listBucket(ctx, bucket, byBucket[bucket])
		if err != nil {
			return nil, dialects.Wrap(Name, "list", err)
		}
		if !found {
			continue
		}
		for _, t := range byBucket[bucket] {
			listing.Tables = append(listing.Tables, t.table)
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
	listing.Notes = append(listing.Notes, "a released NATS lock leaves a delete marker, not a value: free locks are not listed")
	return listing, nil
}

// listTables resolves the tables of a listing (the default ones when
// none are given).
func (b *Backend) listTables(in []dialects.Table) ([]listTable, error) {
	if len(in) == 0 {
		in = []dialects.Table{{Preset: dialects.PresetSchedlock}, {Preset: dialects.PresetShedlock}}
	}
	var out []listTable
	for _, t := range in {
		preset := t.Preset
		if preset == "" {
			preset = dialects.PresetSchedlock
			if strings.EqualFold(t.Name, dialects.PresetShedlock) {
				preset = dialects.PresetShedlock
			}
		}
		if preset != dialects.PresetSchedlock && preset != dialects.PresetShedlock {
			return nil, dialects.Invalidf("the NATS backend has the schedlock and shedlock layouts, not the %s preset", preset)
		}
		name := t.Name
		if name == "" {
			name = preset
		}
		if _, err := (dialects.Table{Preset: preset, Name: name}).Schema(); err != nil {
			return nil, err
		}
		bucket := b.bucketOf(preset, name)
		if !validBucket(bucket) {
			return nil, dialects.Invalidf("the NATS bucket %q may hold only letters, digits, _ and -", bucket)
		}
		out = append(out, listTable{table: dialects.Table{Preset: preset, Name: name}, bucket: bucket, shed: preset == dialects.PresetShedlock})
	}
	return out, nil
}

// listBucket reads the last value of every key of bucket and lists those
// one of tables' layouts reads (the first that does); found is false when
// the bucket does not exist.
func (b *Backend) listBucket(ctx context.Context, bucket string, tables []listTable) ([]dialects.LockEntry, bool, error) {
	info, found, err := b.readBucket(ctx, bucket)
	if err != nil || !found {
		return nil, found, err
	}
	now, serverNow := info.TimeStamp, true
	if now.IsZero() { // a server before 2.10 sends no clock
		now, serverNow = time.Now(), false
	}
	if info.State.Msgs == 0 {
		return nil, true, nil
	}
	msgs, err := b.lastValues(ctx, bucket, int(info.State.NumSubjects))
	if err != nil {
		return nil, true, err
	}
	prefix := "$KV." + bucket + "."
	var out []dialects.LockEntry
	for _, m := range msgs {
		key := strings.TrimPrefix(m.subject, prefix)
		if op := m.header.Get(hdrKVOperation); op != "" && op != "PUT" {
			continue
		}
		for _, t := range tables {
			var st state
			var name string
			if t.shed {
				if _, err := shedlockKey(key); err != nil {
					continue
				}
				if st, err = decodeShedValue(key, m.data, m.header, m.seq, m.time); err != nil {
					continue
				}
				name = key
			} else {
				var ok bool
				if name, ok = nameOf(key); !ok || keyOf(name) != key {
					continue
				}
				if st, err = decodeValue(bucket, key, m.data, m.seq, m.time); err != nil {
					continue
				}
			}
			row := st.row(name, now, serverNow)
			e := dialects.LockEntry{Name: name, Key: key, Strategy: dialects.StrategyTable, Source: t.table.Name, Preset: t.table.Preset,
				Owner: row.Owner, Token: row.Token, HasToken: true, LockedAt: row.LockedAt, Until: row.Until, DBNow: row.DBNow}
			e.SetRowState(row)
			out = append(out, e)
			break
		}
	}
	return out, true, nil
}

// rawMsg is one message of a bucket's stream.
type rawMsg struct {
	subject string
	header  natsgo.Header
	data    []byte
	seq     uint64
	time    time.Time
}

// lastValues reads the last message of every subject of the bucket: a
// consumer of its own (deliver last per subject, no acks, in memory),
// fetched until nothing is pending, then deleted.
func (b *Backend) lastValues(ctx context.Context, bucket string, hint int) ([]rawMsg, error) {
	c, err := b.js.CreateConsumer(ctx, streamOf(bucket), jetstream.ConsumerConfig{
		FilterSubject: "$KV." + bucket + ".>", DeliverPolicy: jetstream.DeliverLastPerSubjectPolicy,
		AckPolicy: jetstream.AckNonePolicy, MemoryStorage: true, InactiveThreshold: time.Minute})
	if err != nil {
		return nil, fmt.Errorf("bucket %s: read the keys: %w", bucket, err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = b.js.DeleteConsumer(dctx, streamOf(bucket), c.CachedInfo().Name)
	}()
	pending := uint64(c.CachedInfo().NumPending)
	if hint < 1 {
		hint = 1
	}
	var out []rawMsg
	for pending > 0 {
		n := int(pending)
		if len(out) == 0 && hint > n {
			n = hint
		}
		batch, err := c.Fetch(n, jetstream.FetchMaxWait(b.cfg.dialTimeout))
		if err != nil {
			return nil, fmt.Errorf("bucket %s: read the keys: %w", bucket, err)
		}
		got := 0
		for m := range batch.Messages() {
			got++
			md, err := m.Metadata()
			if err != nil {
				return nil, fmt.Errorf("bucket %s: read the keys: %w", bucket, err)
			}
			out = append(out, rawMsg{subject: m.Subject(), header: m.Headers(), data: m.Data(), seq: md.Sequence.Stream, time: md.Timestamp})
			pending = md.NumPending
		}
		if err := batch.Error(); err != nil {
			return nil, fmt.Errorf("bucket %s: read the keys: %w", bucket, err)
		}
		if got == 0 {
			return nil, fmt.Errorf("bucket %s: read the keys: %d values announced, none delivered within %s", bucket, pending, b.cfg.dialTimeout)
		}
	}
	return out, nil
}

// FindLock implements dialects.LockLister: the lock called name exactly,
// in every table of a listing (or in tables).
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

// Liquibase implements dialects.LockBreaker: NATS has no Liquibase table.
func (b *Backend) Liquibase(string) (dialects.LiquibaseLock, error) {
	return nil, fmt.Errorf("%w: NATS has no Liquibase lock table", dialects.ErrUnsupported)
}

// LockAdmin implements dialects.LockBreaker: nil, NATS has no session
// locks (a lock's key is deleted under its revision guard).
func (b *Backend) LockAdmin() dialects.LockAdmin { return nil }

// ReleaseDeletesKey implements dialects.KeyDeleter: a release (after
// at-least), a forced expiry and a resume delete the lock's key.
func (b *Backend) ReleaseDeletesKey() bool { return true }
