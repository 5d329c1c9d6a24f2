package benchkit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
)

// LeaseAtMost is the at-most of every lease the --leases measurement holds:
// each is renewed every 10 s (AtMost/3, as WithLock does).
const LeaseAtMost = 30 * time.Second

// DefaultLeaseHold is how long the --leases measurement holds its leases
// when no duration is given: long enough for three renewals of each.
const DefaultLeaseHold = 35 * time.Second

// Leases is N table leases (a store's leases) held at once by one handle
// through WithLock, each kept alive by WithLock's refreshes, for a hold
// time; then released as their jobs return.
type Leases struct {
	Strategy       string  `json:"strategy"`
	Leases         int     `json:"leases"`
	AtMostSeconds  float64 `json:"at_most_seconds"`
	HoldSeconds    float64 `json:"hold_seconds"`
	Acquired       int     `json:"acquired"`
	TakeAllSeconds float64 `json:"take_all_seconds"`
	// Held is how many were still held when the hold ended; Lost how many
	// were lost before (must be 0).
	Held int `json:"held"`
	Lost int `json:"lost"`
	// Refreshes is how many lease refreshes WithLock asked for during the
	// hold; RefreshStatements how many statements (a store: round trips)
	// carried them, null where the locker does not count them.
	Refreshes                  int64    `json:"refreshes"`
	RefreshesPerSecond         float64  `json:"refreshes_per_second"`
	RefreshStatements          *int64   `json:"refresh_statements"`
	RefreshStatementsPerSecond *float64 `json:"refresh_statements_per_second"`
	// MaxConnections is the most connections the client's pool had open
	// at once, sampled every 100 ms over the whole measurement;
	// ConnectionLimit the pool's limit (x-max-conns). Both null where the
	// client's pool cannot say.
	MaxConnections    *int    `json:"max_connections"`
	ConnectionLimit   *int    `json:"connection_limit"`
	ReleaseAllSeconds float64 `json:"release_all_seconds"`
	// Extra client memory while all were held, after garbage collection.
	ExtraHeapAllocBytes int64   `json:"extra_heap_alloc_bytes"`
	ExtraSysBytes       int64   `json:"extra_sys_bytes"`
	Error               *string `json:"error"`
}

// RefreshCounter is a locker that counts the statements (a store: round
// trips) its lease refreshes took.
type RefreshCounter interface {
	RefreshStatements() int64
}

// refreshStatements counts locktable's refresh statements, single and
// batched.
func refreshStatements(l dialects.Locker) (func() int64, bool) {
	switch c := l.(type) {
	case *locktable.Locker:
		return func() int64 { s := c.Stats(); return s.Refresh + s.RefreshBatch }, true
	case RefreshCounter:
		return c.RefreshStatements, true
	}
	return nil, false
}

// PoolCounter is a backend whose client can say how many connections its
// pool has open and may open.
type PoolCounter interface {
	PoolConnections() (open, limit int)
}

// HoldLeases takes n leases named prefix-0, prefix-1, … with locker, each
// through dialects.WithLock with owner and LeaseAtMost, holds them all for
// hold, then lets every job return and waits for the releases. It counts
// the refreshes and their statements, the losses, the pool's connections
// and the extra client memory.
func HoldLeases(ctx context.Context, backend dialects.Backend, locker dialects.Locker, prefix string, n int, owner string, hold time.Duration) (Leases, error) {
	res := Leases{Strategy: string(locker.Strategy()), Leases: n, AtMostSeconds: LeaseAtMost.Seconds(), HoldSeconds: hold.Seconds()}
	pool := poolCounter(backend)
	var most atomic.Int64
	sampleStop := make(chan struct{})
	sampled := make(chan struct{})
	if pool != nil {
		_, limit := pool()
		res.ConnectionLimit = &limit
		go func() {
			defer close(sampled)
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for {
				if open, _ := pool(); int64(open) > most.Load() {
					most.Store(int64(open))
				}
				select {
				case <-sampleStop:
					return
				case <-tick.C:
				}
			}
		}()
	} else {
		close(sampled)
	}
	counted := &countingLocker{Locker: locker}
	statements, countsStatements := refreshStatements(locker)
	before := memory()

	opts := dialects.Options{Owner: owner, AtMost: LeaseAtMost}
	release := make(chan struct{})
	var taken, lost atomic.Int64
	var takenWG, doneWG sync.WaitGroup
	errs := make([]error, n)
	start := time.Now()
	takenWG.Add(n)
	for i := range n {
		doneWG.Go(func() {
			acquired := false
			errs[i] = dialects.WithLock(ctx, counted, fmt.Sprintf("%s-%d", prefix, i), opts, func(ctx context.Context, _ dialects.Lease) error {
				acquired = true
				taken.Add(1)
				takenWG.Done()
				select {
				case <-release:
					return nil
				case <-ctx.Done():
					if errors.Is(context.Cause(ctx), dialects.ErrLeaseLost) {
						lost.Add(1)
					}
					return context.Cause(ctx)
				}
			})
			if !acquired {
				takenWG.Done()
			}
		})
	}
	takenWG.Wait()
	res.TakeAllSeconds = round(time.Since(start).Seconds(), 6)
	res.Acquired = int(taken.Load())
	after := memory()
	res.ExtraHeapAllocBytes = int64(after.HeapAlloc) - int64(before.HeapAlloc)
	res.ExtraSysBytes = int64(after.Sys) - int64(before.Sys)

	holdStart := time.Now()
	refreshes0 := counted.refreshes.Load()
	var statements0 int64
	if countsStatements {
		statements0 = statements()
	}
	select {
	case <-time.After(hold):
	case <-ctx.Done():
	}
	held := time.Since(holdStart)
	res.Refreshes = counted.refreshes.Load() - refreshes0
	res.RefreshesPerSecond = round(float64(res.Refreshes)/held.Seconds(), 1)
	if countsStatements {
		s := statements() - statements0
		perSec := round(float64(s)/held.Seconds(), 1)
		res.RefreshStatements, res.RefreshStatementsPerSecond = &s, &perSec
	}
	res.Lost = int(lost.Load())
	res.Held = res.Acquired - res.Lost

	start = time.Now()
	close(release)
	doneWG.Wait()
	res.ReleaseAllSeconds = round(time.Since(start).Seconds(), 6)
	close(sampleStop)
	<-sampled
	if pool != nil {
		m := int(most.Load())
		res.MaxConnections = &m
	}
	var failed []error
	for i, err := range errs {
		if err != nil {
			failed = append(failed, fmt.Errorf("lease %s-%d: %w", prefix, i, err))
		}
	}
	if len(failed) > 0 {
		msg := fmt.Sprintf("%d of %d leases failed; the first: %v", len(failed), n, failed[0])
		res.Error = &msg
		return res, errors.New(msg)
	}
	return res, nil
}

// poolCounter reads the connections of backend's client pool: a SQL
// database's database/sql pool, or a PoolCounter's; nil when neither.
func poolCounter(backend dialects.Backend) func() (open, limit int) {
	if t := newTarget(backend); t.db != nil {
		return func() (int, int) {
			s := t.db.SQL.Stats()
			return s.OpenConnections, s.MaxOpenConnections
		}
	}
	if p, ok := backend.(PoolCounter); ok {
		return p.PoolConnections
	}
	return nil
}

// countingLocker counts the refreshes of the leases it hands out.
type countingLocker struct {
	dialects.Locker
	refreshes atomic.Int64
}

func (c *countingLocker) Acquire(ctx context.Context, name string, opts dialects.Options) (dialects.Lease, error) {
	lease, err := c.Locker.Acquire(ctx, name, opts)
	if err != nil {
		return nil, err
	}
	return &countingLease{Lease: lease, n: &c.refreshes}, nil
}

type countingLease struct {
	dialects.Lease
	n *atomic.Int64
}

func (l *countingLease) Refresh(ctx context.Context) error {
	l.n.Add(1)
	return l.Lease.Refresh(ctx)
}

// Unwrap returns the locker's own lease.
func (l *countingLease) Unwrap() dialects.Lease { return l.Lease }
