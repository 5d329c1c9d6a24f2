package etcd

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/schedlock/schedlock/dialects"
)

// lease is one acquire's lock: its key, bound to its own etcd lease.
type lease struct {
	locker          *Locker
	name, owner     string
	key             string
	id              clientv3.LeaseID
	ttl             int64 // requested TTL in seconds (the spare pool's class)
	token           int64 // the key's create revision
	atMost, atLeast time.Duration
	lockedAt        time.Time

	op      sync.Mutex // serialises Refresh and Release
	renewed spare      // the lease as last granted or kept alive (guarded by op)
	until   atomic.Int64
	timer   *time.Timer

	endMu sync.Mutex
	ended bool
	err   error
	done  chan struct{}
}

func (s *lease) Name() string  { return s.name }
func (s *lease) Owner() string { return s.owner }

// Token is the key's create revision, where the layout shows tokens.
func (s *lease) Token() (int64, bool) {
	if s.locker.schema.TokenCol == "" {
		return 0, false
	}
	return s.token, true
}

func (s *lease) Done() <-chan struct{} { return s.done }

func (s *lease) Until() time.Time { return time.Unix(0, s.until.Load()) }

func (s *lease) setUntil(t time.Time) { s.until.Store(t.UnixNano()) }

func (s *lease) Err() error {
	s.endMu.Lock()
	defer s.endMu.Unlock()
	return s.err
}

// end ends the lease with err (nil: released); false when it had ended.
func (s *lease) end(err error) bool {
	s.endMu.Lock()
	defer s.endMu.Unlock()
	if s.ended {
		return false
	}
	s.ended, s.err = true, err
	s.timer.Stop()
	close(s.done)
	return true
}

func (s *lease) isEnded() (bool, error) {
	s.endMu.Lock()
	defer s.endMu.Unlock()
	return s.ended, s.err
}

// lost builds the ErrLeaseLost of op.
func (s *lease) lost(op, why string) error {
	return fmt.Errorf("%w: %s of %q: %s", dialects.ErrLeaseLost, op, s.name, why)
}

// expire ends a lease that was not refreshed within at-most, on the
// holder's clock, and revokes it, so the lock is free for others as soon
// as the holder has been told (it stays on the server no longer than the
// lease's TTL if the revoke does not get through).
func (s *lease) expire() {
	s.endMu.Lock() // also orders this after the timer's creation (see try)
	if s.ended {
		s.endMu.Unlock()
		return
	}
	if left := time.Until(s.Until()); left > 0 {
		s.timer.Reset(left) // refreshed meanwhile
		s.endMu.Unlock()
		return
	}
	s.endMu.Unlock()
	if s.end(s.lost("hold", fmt.Sprintf("the lease ran out: not refreshed within at-most (%s)", s.atMost))) {
		s.locker.b.revoke(s.id)
	}
}

// afterEnd is the error of a call on a lease that has ended.
func (s *lease) afterEnd(op string) error {
	_, err := s.isEnded()
	if err != nil {
		return fmt.Errorf("%w: %s of %q after the lease was lost (%v)", dialects.ErrLeaseLost, op, s.name, err)
	}
	return s.lost(op, "the lease was released before")
}

// Refresh implements dialects.Lease: a keepalive of the lease (its TTL
// starts again on the server) and a rewrite of the key's lease end,
// guarded by the token, so a key deleted by a forced release is noticed.
func (s *lease) Refresh(ctx context.Context) error {
	s.op.Lock()
	defer s.op.Unlock()
	if ended, _ := s.isEnded(); ended {
		return dialects.Wrap(Name, "refresh", s.afterEnd("refresh"))
	}
	sent := time.Now()
	cli := s.locker.b.cli
	ka, err := cli.KeepAliveOnce(ctx, s.id)
	if err != nil {
		if errors.Is(err, rpctypes.ErrLeaseNotFound) {
			err = s.lost("refresh", "its etcd lease has expired or was revoked")
			s.end(err)
			return dialects.Wrap(Name, "refresh", err)
		}
		return dialects.Wrap(Name, "refresh", fmt.Errorf("keep lease %x alive: %w", int64(s.id), err))
	}
	s.renewed = spare{id: s.id, ttl: ka.TTL, at: sent}
	until := sent.Add(s.atMost)
	if e := s.renewed.ends(); e.Before(until) {
		until = e
	}
	v := value{Owner: s.owner, LockedAt: s.lockedAt.UTC(), Until: until.UTC()}
	resp, err := cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(s.key), "=", s.token)).
		Then(clientv3.OpPut(s.key, v.encode(), clientv3.WithLease(s.id))).
		Commit()
	if err != nil {
		return dialects.Wrap(Name, "refresh", fmt.Errorf("rewrite %q: %w", s.key, err))
	}
	if !resp.Succeeded {
		err := s.lost("refresh", "its key was deleted (a forced release)")
		if s.end(err) {
			s.locker.b.revoke(s.id)
		}
		return dialects.Wrap(Name, "refresh", err)
	}
	if ended, _ := s.isEnded(); ended {
		// It ran out while the refresh was on its way: the expiry stands.
		return dialects.Wrap(Name, "refresh", s.afterEnd("refresh"))
	}
	s.setUntil(until)
	s.timer.Reset(time.Until(until))
	return nil
}

// Release implements dialects.Lease: the key is deleted while its create
// revision is the token; with at-least still to run it is kept instead,
// bound to a lease of the time that remains, and deleted when it has
// passed.
func (s *lease) Release(ctx context.Context) error {
	s.op.Lock()
	defer s.op.Unlock()
	if ended, _ := s.isEnded(); ended {
		return dialects.Wrap(Name, "release", s.afterEnd("release"))
	}
	b := s.locker.b
	keep := s.lockedAt.Add(s.atLeast)
	if s.atLeast > 0 && time.Until(keep) > 0 {
		return dialects.Wrap(Name, "release", s.keepUntil(ctx, keep))
	}
	resp, err := b.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(s.key), "=", s.token)).
		Then(clientv3.OpDelete(s.key)).
		Commit()
	if err != nil {
		return dialects.Wrap(Name, "release", fmt.Errorf("delete %q: %w", s.key, err))
	}
	if !resp.Succeeded {
		err := s.lost("release", "its key was gone (expired or force-released)")
		if s.end(err) {
			b.revoke(s.id)
		}
		return dialects.Wrap(Name, "release", err)
	}
	if s.end(nil) {
		b.recycle(s.renewed, s.ttl)
	}
	return nil
}

// keepUntil rebinds the key to a lease of the at-least that remains,
// marked released, and deletes it at keep.
func (s *lease) keepUntil(ctx context.Context, keep time.Time) error {
	b := s.locker.b
	remaining := time.Until(keep)
	g, err := b.cli.Grant(ctx, ttlSeconds(remaining))
	if err != nil {
		return fmt.Errorf("grant the at-least lease: %w", err)
	}
	v := value{Owner: s.owner, LockedAt: s.lockedAt.UTC(), Until: keep.UTC(), Released: true}
	resp, err := b.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(s.key), "=", s.token)).
		Then(clientv3.OpPut(s.key, v.encode(), clientv3.WithLease(g.ID))).
		Commit()
	if err != nil {
		b.revoke(g.ID)
		return fmt.Errorf("keep %q for at-least: %w", s.key, err)
	}
	if !resp.Succeeded {
		b.revoke(g.ID)
		err := s.lost("release", "its key was gone (expired or force-released)")
		if s.end(err) {
			b.revoke(s.id)
		}
		return err
	}
	if !s.end(nil) {
		return s.afterEnd("release")
	}
	b.recycle(s.renewed, s.ttl)
	b.deleteAt(s.key, s.token, resp.Header.Revision, g.ID, keep)
	return nil
}

// deleteAt deletes key at t if it is still the one written at revision
// mod, then revokes its lease; the lease ends it anyway if this process
// is gone by then.
func (b *Backend) deleteAt(key string, create, mod int64, id clientv3.LeaseID, t time.Time) {
	b.background(time.Until(t)+10*time.Second, func(ctx context.Context) {
		timer := time.NewTimer(time.Until(t))
		defer timer.Stop()
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		_, _ = b.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.CreateRevision(key), "=", create), clientv3.Compare(clientv3.ModRevision(key), "=", mod)).
			Then(clientv3.OpDelete(key)).
			Commit()
		_, _ = b.cli.Revoke(ctx, id)
	})
}
