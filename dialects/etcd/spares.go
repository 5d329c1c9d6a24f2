package etcd

import (
	"context"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// spares keeps a few leases with no key bound to them, renewed just now,
// so that an acquire does not wait for a lease grant: a released lock's
// lease is renewed in the background and kept here for the next acquire
// with the same TTL. A spare is taken only while its server-side end is
// still at least at-most away, so a lock never ends earlier than it says.
type spares struct {
	mu    sync.Mutex
	byTTL map[int64][]spare
	count int
}

// spare is one lease with no key.
type spare struct {
	id  clientv3.LeaseID
	ttl int64     // the TTL the server granted, in seconds
	at  time.Time // when the request that set it was sent
}

// maxSpares bounds the spare leases kept per backend and per TTL.
const (
	maxSpares       = 16
	maxSparesPerTTL = 4
)

// ends is the earliest instant the server can end s.
func (s spare) ends() time.Time { return s.at.Add(time.Duration(s.ttl) * time.Second) }

// take returns a spare of ttl that lasts until at least by, and the
// spares of ttl it passed over as ending too early for that: the caller
// revokes those (left alone, each would outlive its use by up to its TTL).
func (p *spares) take(ttl int64, by time.Time) (s spare, ok bool, stale []spare) {
	p.mu.Lock()
	defer p.mu.Unlock()
	list := p.byTTL[ttl]
	for len(list) > 0 {
		s = list[len(list)-1]
		list = list[:len(list)-1]
		p.count--
		if !s.ends().Before(by) {
			p.byTTL[ttl] = list
			return s, true, stale
		}
		stale = append(stale, s)
	}
	delete(p.byTTL, ttl) // none left (a no-op on the nil map of no spares)
	return spare{}, false, stale
}

// put keeps s; false when the pool is full (the caller revokes it).
func (p *spares) put(s spare, wantTTL int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byTTL == nil {
		p.byTTL = map[int64][]spare{}
	}
	if p.count >= maxSpares || len(p.byTTL[wantTTL]) >= maxSparesPerTTL {
		return false
	}
	p.byTTL[wantTTL] = append(p.byTTL[wantTTL], s)
	p.count++
	return true
}

// drain revokes every spare.
func (p *spares) drain(ctx context.Context, cli *clientv3.Client) {
	p.mu.Lock()
	all := p.byTTL
	p.byTTL, p.count = nil, 0
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, list := range all {
		for _, s := range list {
			wg.Go(func() { _, _ = cli.Revoke(ctx, s.id) })
		}
	}
	wg.Wait()
}

// ttlSeconds is the lease TTL of atMost: whole seconds, rounded up.
func ttlSeconds(atMost time.Duration) int64 {
	s := int64((atMost + time.Second - 1) / time.Second)
	return max(s, 1)
}
