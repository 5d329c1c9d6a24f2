package batch

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// Items added while a send is in flight go together in the next send; a
// withdrawn item is never sent and gets no outcome; every sent item gets
// its own outcome.
func TestQueueGathersWhileASendIsInFlight(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var sends [][]int
	q := New(0, func(items []*Item[int, int]) {
		vals := make([]int, len(items))
		for i, it := range items {
			vals[i] = it.Val
		}
		mu.Lock()
		sends = append(sends, vals)
		first := len(sends) == 1
		mu.Unlock()
		if first {
			<-release // hold the first send in flight
		}
		for _, it := range items {
			it.Deliver(it.Val * 10)
		}
	})
	first := q.Add(1)
	for { // wait until the first send has taken item 1
		mu.Lock()
		n := len(sends)
		mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if first.Withdraw() {
		t.Fatal("Withdraw of an item a send has taken reported true")
	}
	second, third, gone := q.Add(2), q.Add(3), q.Add(4)
	if !gone.Withdraw() {
		t.Fatal("Withdraw of a queued item reported false")
	}
	close(release)
	for _, c := range []struct {
		it   *Item[int, int]
		want int
	}{{first, 10}, {second, 20}, {third, 30}} {
		if got := <-c.it.Outcome(); got != c.want {
			t.Errorf("outcome of %d = %d, want %d", c.it.Val, got, c.want)
		}
	}
	q.Wait()
	if !slices.EqualFunc(sends, [][]int{{1}, {2, 3}}, slices.Equal) {
		t.Errorf("sends = %v, want [[1] [2 3]]", sends)
	}
	select {
	case v := <-gone.Outcome():
		t.Errorf("withdrawn item got outcome %d", v)
	default:
	}
}

// Under a window, a send that follows another within the window waits for
// it; an idle queue sends at once.
func TestQueueWindowPacesSends(t *testing.T) {
	const window = 200 * time.Millisecond
	var mu sync.Mutex
	var at []time.Time
	q := New(window, func(items []*Item[int, struct{}]) {
		mu.Lock()
		at = append(at, time.Now())
		mu.Unlock()
		for _, it := range items {
			it.Deliver(struct{}{})
		}
	})
	<-q.Add(1).Outcome()
	<-q.Add(2).Outcome()
	q.Wait()
	if len(at) != 2 {
		t.Fatalf("%d sends, want 2", len(at))
	}
	if gap := at[1].Sub(at[0]); gap < window {
		t.Errorf("second send %s after the first, want at least the window %s", gap, window)
	}
}
