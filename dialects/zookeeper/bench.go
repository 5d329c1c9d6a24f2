package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/schedlock/schedlock/dialects/benchops"
)

// The raw commands `schedlock bench` measures the engine against: the
// textbook ZooKeeper lock on go-zookeeper's own client, none of the
// engine's code — create the lock's ephemeral node (taken; "node exists":
// held by another) and delete it.
var (
	_ benchops.StoreBaseline = (*Backend)(nil)
	_ benchops.RoundTripper  = (*Backend)(nil)
)

// RoundTripSQL names the round trip's command.
func (*Backend) RoundTripSQL() string { return "exists /" }

// RawStoreOps implements benchops.StoreBaseline with a go-zookeeper
// client of its own on b's ensemble (b's credentials, no chroot of the
// client's: paths are written whole); the raw lock nodes of every client
// opened on b live under one temporary node in the DSN's chroot (so
// contending workers, a client each, meet on the same names), deleted
// when the last of them closes.
func (b *Backend) RawStoreOps(ctx context.Context) (benchops.StoreOps, error) {
	conn, _, err := zk.Connect(b.cfg.Servers, b.cfg.SessionTimeout, zk.WithLogger(nopLogger{}), zk.WithLogInfo(false))
	if err != nil {
		return benchops.StoreOps{}, err
	}
	acl := zk.WorldACL(zk.PermAll)
	for conn.State() != zk.StateHasSession {
		select {
		case <-ctx.Done():
			conn.Close()
			return benchops.StoreOps{}, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	if b.cfg.User != "" {
		if err := conn.AddAuth("digest", []byte(b.cfg.User+":"+b.cfg.Password)); err != nil {
			conn.Close()
			return benchops.StoreOps{}, err
		}
		acl = zk.AuthACL(zk.PermAll)
	}
	parent, err := b.benchRaw.join(b.cfg.Chroot, func(parent string) error { return createPath(conn, parent, acl) })
	if err != nil {
		conn.Close()
		return benchops.StoreOps{}, err
	}
	node := func(name string) string { return parent + "/" + url.PathEscape(name) }
	return benchops.StoreOps{
		RoundTrip: func(context.Context) error { _, _, err := conn.Exists("/"); return err },
		TryLock: func(_ context.Context, name string) (bool, error) {
			_, err := conn.Create(node(name), nil, zk.FlagEphemeral, acl)
			if errors.Is(err, zk.ErrNodeExists) {
				return false, nil
			}
			return err == nil, err
		},
		Unlock: func(_ context.Context, name string) error { return conn.Delete(node(name), -1) },
		Close: func() error {
			err := b.benchRaw.leave(func(parent string) error {
				children, _, err := conn.Children(parent)
				for _, c := range children {
					_ = conn.Delete(parent+"/"+c, -1)
				}
				if err == nil {
					err = conn.Delete(parent, -1)
				}
				return err
			})
			conn.Close()
			return err
		},
	}, nil
}

// createPath creates p and its missing ancestors as persistent nodes.
func createPath(conn *zk.Conn, p string, acl []zk.ACL) error {
	for i := 1; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		if _, err := conn.Create(p[:i], nil, 0, acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("create %s: %w", p[:i], err)
		}
	}
	return nil
}

// benchRaw is the parent node the raw clients of one backend share: made
// by the first to join, deleted by the last to leave.
type benchRaw struct {
	mu      sync.Mutex
	parent  string
	clients int
}

// join returns the shared parent node's path (in chroot), calling
// create with a new one when no client has it.
func (r *benchRaw) join(chroot string, create func(parent string) error) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.clients == 0 {
		table := chroot + "/schedlock_bench_raw_" + strings.ReplaceAll(newUUID(), "-", "")
		if err := create(table); err != nil {
			return "", err
		}
		r.parent = table
	}
	r.clients++
	return r.parent, nil
}

// leave calls drop with the shared parent when the last client leaves.
func (r *benchRaw) leave(drop func(parent string) error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.clients--; r.clients > 0 {
		return nil
	}
	parent := r.parent
	r.parent = ""
	return drop(parent)
}
