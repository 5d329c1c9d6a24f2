// Package batch gathers requests that arrive close together so that one
// round trip serves them all: the lease-table engine renews many leases of
// one owner with one statement, the Redis backend pipelines many refresh
// scripts, both through a Queue.
//
// A Queue sends at once when it has been idle for its window, so a lone
// request costs no waiting; under load it sends at most once per window,
// every request that arrived meanwhile together. One send is in flight at
// a time, so a queue uses one connection of its pool at a time.
package batch

import (
	"sync"
	"sync/atomic"
	"time"
)

// States of an Item.
const (
	queued int32 = iota
	taken
	withdrawn
)

// Item is one request in a Queue: its value and, once its send is over,
// its outcome.
type Item[T, O any] struct {
	Val   T
	state atomic.Int32
	out   chan O
}

// Withdraw takes the item out of its queue unless a send has taken it
// already; it reports whether it did. A withdrawn item gets no outcome.
func (it *Item[T, O]) Withdraw() bool { return it.state.CompareAndSwap(queued, withdrawn) }

// Outcome delivers the item's outcome once its send is over.
func (it *Item[T, O]) Outcome() <-chan O { return it.out }

// Deliver hands o to the item's waiter; a send calls it once per item.
func (it *Item[T, O]) Deliver(o O) { it.out <- o }

// Queue gathers Items and hands them to its send function together.
type Queue[T, O any] struct {
	window time.Duration
	send   func(items []*Item[T, O])

	mu      sync.Mutex
	pending []*Item[T, O]
	running bool      // a flusher goroutine is at work
	last    time.Time // when the last send began
	flushes sync.WaitGroup
}

// New returns a Queue that hands the items gathered to send, which must
// call Deliver on every one of them before it returns; window is the least
// time between two sends (0: send as soon as the previous send is over).
func New[T, O any](window time.Duration, send func(items []*Item[T, O])) *Queue[T, O] {
	return &Queue[T, O]{window: window, send: send}
}

// Add queues v and returns its Item; its outcome arrives on Outcome.
func (q *Queue[T, O]) Add(v T) *Item[T, O] {
	it := &Item[T, O]{Val: v, out: make(chan O, 1)}
	q.mu.Lock()
	q.pending = append(q.pending, it)
	if !q.running {
		q.running = true
		q.flushes.Add(1)
		go q.flush()
	}
	q.mu.Unlock()
	return it
}

// Wait returns once no send is in flight and nothing is queued.
func (q *Queue[T, O]) Wait() { q.flushes.Wait() }

// flush sends what is queued, pacing the sends by the window, until the
// queue is empty.
func (q *Queue[T, O]) flush() {
	defer q.flushes.Done()
	for {
		q.mu.Lock()
		wait := q.window - time.Since(q.last)
		q.mu.Unlock()
		if wait > 0 {
			time.Sleep(wait)
		}
		q.mu.Lock()
		items := q.pending
		q.pending = nil
		if len(items) == 0 {
			q.running = false
			q.mu.Unlock()
			return
		}
		q.last = time.Now()
		q.mu.Unlock()
		live := items[:0]
		for _, it := range items {
			if it.state.CompareAndSwap(queued, taken) {
				live = append(live, it)
			}
		}
		if len(live) > 0 {
			q.send(live)
		}
	}
}
