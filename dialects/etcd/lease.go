package etcd

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/schedlock/schedlock/dialects"
)

// lease is one acquire's lock: its key, bound to its own etcd lease.
//
// Its end (dialects.LeaseEnd) is Until: at-most from the host time before
// the acquire or the last refresh was sent, never after the etcd lease's
// own end; when it passes unrefreshed the lease is lost and its etcd
// lease revoked, so the lock is free for others as soon as the holder
// can have been told.
//
// Its at-least counts from grantedBy, when the acquire's answer had
// arrived: the server granted the lock before it, so at-least from then
// (on this host's monotonic clock) ends no earlier than at-least from
// the grant. Counting from lockedAt, taken before the request, would
// free the lock early by the acquire's round trip.
type lease struct {
	dialects.LeaseEnd

	locker          *Locker
	name, owner     string
	key             string
	id              clientv3.LeaseID
	ttl             int64 // requested TTL in seconds (the spare pool's class)
	token           int64 // the key's create revision
	atMost, atLeast time.Duration
	lockedAt        time.Time // shown as locked-at: the host time just before the acquire was sent
	grantedBy       time.Time // the host time just after the acquire's answer arrived

	op      sync.Mutex // serialises Refresh and Release
	renewed spare      // the lease as last granted or kept alive (guarded by op)
}

var _ dialects.RefreshFailure = (*lease)(nil)

func (s *lease) Name() string  { return s.name }
func (s *lease) Owner() string { return s.owner }

// Token is the key's create revision, where the layout shows tokens.
func (s *lease) Token() (int64, bool) {
	if s.locker.schema.TokenCol == "" {
		return 0, false
	}
	return s.token, true
}

// lost builds the ErrLeaseLost of op.
func (s *lease) lost(op, why string) error {
	return fmt.Errorf("%w: %s of %q: %s", dialects.ErrLeaseLost, op, s.name, why)
}

// expired is the error of a lease whose Until passed unrefreshed; it
// also revokes the etcd lease (in the background: it is called under
// the LeaseEnd's lock), so its key goes at once, not TTL seconds later.
func (s *lease) expired(_ time.Time, lastRefresh error) error {
	go s.locker.b.revoke(s.id)
	why := fmt.Sprintf("the lease ran out: not refreshed within at-most (%s)", s.atMost)
	if lastRefresh != nil {
		why += fmt.Sprintf("; the last refresh failed: %v", lastRefresh)
	}
	return s.lost("hold", why)
}

// afterEnd is the error of a call on a lease that has ended.
func (s *lease) afterEnd(op string) error {
	_, err := s.Ended()
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
	if ended, _ := s.Ended(); ended {
		return dialects.Wrap(Name, "refresh", s.afterEnd("refresh"))
	}
	sent := time.Now()
	cli := s.locker.b.cli
	ttl, err := s.locker.b.renew.keepAliveOnce(ctx, s.id)
	if err != nil {
		if errors.Is(err, rpctypes.ErrLeaseNotFound) {
			return dialects.Wrap(Name, "refresh", s.End(s.lost("refresh", "its etcd lease has expired or was revoked")))
		}
		return s.RefreshFailed(dialects.Wrap(Name, "refresh", fmt.Errorf("keep lease %x alive: %w", int64(s.id), err)))
	}
	s.renewed = spare{id: s.id, ttl: ttl, at: sent}
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
		return s.RefreshFailed(dialects.Wrap(Name, "refresh", fmt.Errorf("rewrite %q: %w", s.key, err)))
	}
	if !resp.Succeeded {
		err := s.End(s.lost("refresh", "its key was deleted (a forced release)"))
		s.locker.b.revoke(s.id)
		return dialects.Wrap(Name, "refresh", err)
	}
	// Had it run out while the refresh was on its way, the expiry stands.
	return dialects.Wrap(Name, "refresh", s.Extend(until))
}

// Release implements dialects.Lease: the key is deleted while its create
// revision is the token, and its etcd lease kept as a spare for the
// backend's next acquire; with at-least still to run (counted from
// grantedBy) it is kept instead, bound to a lease of the time that
// remains, and deleted when it has passed. The first lease a backend
// took, while it is the only one (a `schedlock run`), is released by
// revoking its etcd lease instead (revoke): one call, which deletes the
// key with it and leaves no spare for Close to revoke.
func (s *lease) Release(ctx context.Context) error {
	s.op.Lock()
	defer s.op.Unlock()
	if ended, _ := s.Ended(); ended {
		return dialects.Wrap(Name, "release", s.afterEnd("release"))
	}
	b := s.locker.b
	keep := s.grantedBy.Add(s.atLeast)
	if s.atLeast > 0 && time.Until(keep) > 0 {
		return dialects.Wrap(Name, "release", s.keepUntil(ctx, keep))
	}
	if b.acquired.Load() <= 1 {
		return dialects.Wrap(Name, "release", s.revoke(ctx))
	}
	resp, err := b.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(s.key), "=", s.token)).
		Then(clientv3.OpDelete(s.key)).
		Commit()
	if err != nil {
		return dialects.Wrap(Name, "release", fmt.Errorf("delete %q: %w", s.key, err))
	}
	if !resp.Succeeded {
		err := s.End(s.lost("release", "its key was gone (expired or force-released)"))
		b.revoke(s.id)
		return dialects.Wrap(Name, "release", err)
	}
	if err := s.End(nil); err != nil {
		return dialects.Wrap(Name, "release", err) // it ran out first: its lease was revoked
	}
	b.recycle(s.renewed, s.ttl)
	return nil
}

// revoke releases the lease by revoking its etcd lease, which deletes
// its key (the only key bound to it) in the same step. A lease the
// server no longer has (expired, or revoked by a forced release: see
// Expire) is reported lost.
func (s *lease) revoke(ctx context.Context) error {
	_, err := s.locker.b.cli.Revoke(ctx, s.id)
	switch {
	case errors.Is(err, rpctypes.ErrLeaseNotFound):
		return s.End(s.lost("release", "its etcd lease had expired or was revoked (force-released)"))
	case err != nil:
		return fmt.Errorf("revoke the lease of %q: %w", s.key, err)
	}
	return s.End(nil) // an error: it ran out first
}

// keepUntil rebinds the key to a lease of the at-least that remains,
// marked released, and deletes it at keep (a host instant with its
// monotonic reading). The lease's TTL is what remains before the grant
// is sent, rounded up to whole seconds, and the server counts it from
// when the grant reaches it: that lease cannot end before keep either,
// and ends the key if this process is gone by then.
func (s *lease) keepUntil(ctx context.Context, keep time.Time) error {
	b := s.locker.b
	g, err := b.cli.Grant(ctx, ttlSeconds(time.Until(keep)))
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
		err := s.End(s.lost("release", "its key was gone (expired or force-released)"))
		b.revoke(s.id)
		return err
	}
	if err := s.End(nil); err != nil {
		return err // it ran out first: its lease was revoked
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
