package zookeeper

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/benchops"
)

// The raw commands of Curator's recipe `schedlock bench` measures the
// engine against: create the ephemeral sequential node, list the children
// to see it is the lowest, delete it.
var (
	_ benchops.StoreBaseline = (*Backend)(nil)
	_ benchops.RoundTripper  = (*Backend)(nil)
)

// RoundTripSQL names the round trip's command.
func (*Backend) RoundTripSQL() string { return "exists /" }

// RawStoreOps implements benchops.StoreBaseline with a client of its own
// on b's ensemble; the raw lock nodes of every client opened on b live
// under one temporary node of the chroot (so contending workers, a client
// each, meet on the same names), deleted when the last of them closes.
func (b *Backend) RawStoreOps(ctx context.Context) (benchops.StoreOps, error) {
	raw, err := OpenConfig(ctx, b.cfg)
	if err != nil {
		return benchops.StoreOps{}, err
	}
	conn := raw.conn
	locker := func(table string) (*Locker, error) {
		tl, err := raw.LeaseLocker(dialects.Table{Name: table})
		if err != nil {
			return nil, err
		}
		return tl.(*Locker), nil
	}
	table, err := b.benchRaw.join(func(table string) error {
		l, err := locker(table)
		if err != nil {
			return err
		}
		return l.CreateTable(ctx)
	})
	if err != nil {
		raw.Close()
		return benchops.StoreOps{}, err
	}
	l, err := locker(table)
	if err != nil {
		_ = b.benchRaw.leave(func() error { return nil })
		raw.Close()
		return benchops.StoreOps{}, err
	}
	var mu sync.Mutex
	held := map[string]string{} // name → our node
	ops := benchops.StoreOps{
		RoundTrip: func(ctx context.Context) error {
			_, err := call(ctx, func() (bool, error) { ok, _, err := conn.Exists("/"); return ok, err })
			return err
		},
		TryLock: func(ctx context.Context, name string) (bool, error) {
			dir := l.NamePath(name)
			p, err := call(ctx, func() (string, error) {
				return conn.Create(dir+"/"+protectedPrefix+newUUID()+"-"+lockPrefix, nil, zk.FlagEphemeral|zk.FlagSequence, raw.acl)
			})
			if errors.Is(err, zk.ErrNoNode) {
				if _, err := call(ctx, func() (string, error) { return conn.Create(dir, nil, 0, raw.acl) }); err != nil && !errors.Is(err, zk.ErrNodeExists) {
					return false, err
				}
				p, err = call(ctx, func() (string, error) {
					return conn.Create(dir+"/"+protectedPrefix+newUUID()+"-"+lockPrefix, nil, zk.FlagEphemeral|zk.FlagSequence, raw.acl)
				})
			}
			if err != nil {
				return false, err
			}
			children, err := call(ctx, func() ([]string, error) { ch, _, err := conn.Children(dir); return ch, err })
			if err != nil {
				return false, err
			}
			nodes := sortedLockNodes(children)
			if len(nodes) == 0 || dir+"/"+nodes[0].name != p {
				_ = conn.Delete(p, -1)
				return false, nil
			}
			mu.Lock()
			held[name] = p
			mu.Unlock()
			return true, nil
		},
		Unlock: func(ctx context.Context, name string) error {
			mu.Lock()
			p := held[name]
			delete(held, name)
			mu.Unlock()
			if p == "" {
				return nil
			}
			_, err := call(ctx, func() (struct{}, error) { return struct{}{}, conn.Delete(p, -1) })
			return err
		},
		Close: func() error {
			ctx, cancel := context.WithTimeout(context.Background(), dropTimeout)
			defer cancel()
			err := b.benchRaw.leave(func() error { return l.DropTable(ctx) })
			raw.Close()
			return err
		},
	}
	return ops, nil
}

// benchRaw is the table the raw clients of one backend share: made by the
// first to join, dropped by the last to leave.
type benchRaw struct {
	mu      sync.Mutex
	table   string
	clients int
}

// join returns the shared table's name, calling create with a new one
// when no client has it.
func (r *benchRaw) join(create func(table string) error) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.clients == 0 {
		table := "schedlock_bench_raw_" + strings.ReplaceAll(newUUID(), "-", "")
		if err := create(table); err != nil {
			return "", err
		}
		r.table = table
	}
	r.clients++
	return r.table, nil
}

// leave calls drop when the last client leaves.
func (r *benchRaw) leave(drop func() error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.clients--; r.clients > 0 {
		return nil
	}
	r.table = ""
	return drop()
}
