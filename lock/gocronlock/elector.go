package gocronlock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-co-op/gocron/v2"

	"github.com/schedlock/schedlock/lock"
)

// ErrNotLeader is what IsLeader returns on a node that is not the leader;
// gocron then skips the run.
var ErrNotLeader = errors.New("gocronlock: not the leader")

// DefaultLease is ElectorOptions.Lease when it is zero.
const DefaultLease = 30 * time.Second

// ElectorOptions tune an Elector.
type ElectorOptions struct {
	// Lease is the leader's lease (default DefaultLease, 30s), refreshed
	// every third of it: how long the nodes go without a leader when the
	// leader dies without resigning.
	Lease time.Duration
	// RetryEvery is how often a node that is not leader tries to become it
	// (default a third of Lease).
	RetryEvery time.Duration
	// Owner is recorded as the leader's identity (default lock.NewOwner()).
	Owner string
}

// Elector implements gocron.Elector with a kept-alive lease on one lock
// name. Create it with NewElector, give it to gocron.WithDistributedElector
// and Close it after the scheduler's Shutdown.
type Elector struct {
	locker lock.Locker
	name   string
	opts   lock.Options
	retry  time.Duration

	stop     context.CancelFunc
	finished chan struct{} // closed when the campaign has ended

	mu      sync.Mutex
	lease   lock.Lease // the leader's lease; nil when not leader
	lastErr error      // the last failed attempt, other than "held"

	closeErr error // what resigning returned; read after finished
}

var _ gocron.Elector = (*Elector)(nil)

// NewElector starts campaigning for the lock called name on locker and
// returns once the first attempt has been answered: leader or not. It fails
// when the options are invalid (ErrInvalid), when that first attempt
// fails for another reason than another leader (the database cannot be
// reached, the lock table is missing), or when ctx ends first; ctx bounds
// only that first attempt. Later failures are retried every RetryEvery;
// IsLeader reports them.
func NewElector(ctx context.Context, locker lock.Locker, name string, opts ElectorOptions) (*Elector, error) {
	switch {
	case opts.Lease < 0:
		return nil, fmt.Errorf("gocronlock: %w: lease must not be negative, got %s", lock.ErrInvalid, opts.Lease)
	case opts.RetryEvery < 0:
		return nil, fmt.Errorf("gocronlock: %w: retry interval must not be negative, got %s", lock.ErrInvalid, opts.RetryEvery)
	}
	if opts.Lease == 0 {
		opts.Lease = DefaultLease
	}
	if opts.RetryEvery == 0 {
		opts.RetryEvery = opts.Lease / 3
	}
	campaign, stop := context.WithCancel(context.Background())
	e := &Elector{locker: locker, name: name, retry: opts.RetryEvery,
		opts: lock.Options{AtMost: opts.Lease, Owner: opts.Owner},
		stop: stop, finished: make(chan struct{})}
	first := make(chan error, 1)
	go e.campaign(campaign, first)
	select {
	case err := <-first:
		if err != nil {
			e.Close()
			return nil, err
		}
		return e, nil
	case <-ctx.Done():
		e.Close()
		return nil, fmt.Errorf("gocronlock: elector %q: %w", name, context.Cause(ctx))
	}
}

// campaign tries to take the lock until ctx ends, holding it for as long
// as it can; the first attempt's outcome goes to first (nil: answered).
func (e *Elector) campaign(ctx context.Context, first chan<- error) {
	defer close(e.finished)
	answered := func(err error) {
		if first != nil {
			first <- err
			first = nil
		}
	}
	retry := time.NewTimer(0)
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			answered(ctx.Err())
			return
		case <-retry.C:
		}
		err := lock.WithLock(ctx, e.locker, e.name, e.opts, func(leaseCtx context.Context, lease lock.Lease) error {
			e.setLeader(lease, nil)
			answered(nil)
			<-leaseCtx.Done() // Close, or the lease lost or about to end
			e.setLeader(nil, nil)
			return nil
		})
		switch {
		case err == nil, errors.Is(err, lock.ErrHeld):
			e.setLeader(nil, nil)
			answered(nil)
		case ctx.Err() != nil:
			if !errors.Is(err, context.Canceled) {
				e.closeErr = err // the release at resignation failed
			}
		default:
			e.setLeader(nil, err)
			answered(err)
		}
		retry.Reset(e.retry)
	}
}

func (e *Elector) setLeader(lease lock.Lease, err error) {
	e.mu.Lock()
	e.lease = lease
	if lease != nil || err != nil {
		e.lastErr = err
	}
	e.mu.Unlock()
}

// IsLeader returns nil while this node holds the leader's lease, and an
// error matching ErrNotLeader otherwise, naming the last failure to reach
// the database if there was one. It answers from memory.
func (e *Elector) IsLeader(context.Context) error {
	e.mu.Lock()
	lease, lastErr := e.lease, e.lastErr
	e.mu.Unlock()
	if lease != nil {
		select {
		case <-lease.Done():
		default:
			return nil
		}
	}
	if lastErr != nil {
		return fmt.Errorf("%w of %q (%w)", ErrNotLeader, e.name, lastErr)
	}
	return fmt.Errorf("%w of %q", ErrNotLeader, e.name)
}

// Close resigns, releasing the lease if this node is leader so that
// another node takes over at its next try, and stops campaigning. It
// returns the release's error; calling it again returns the same.
func (e *Elector) Close() error {
	e.stop()
	<-e.finished
	return e.closeErr
}
