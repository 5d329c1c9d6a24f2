package zookeeper

import (
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// A waiting node whose predecessors all left between its look at the
// queue and its wait (the holder released meanwhile) is the lowest: it
// has nothing to watch and judges the queue again at once, not after
// the one-second look that covers a missed event.
func TestWaitJudgesAgainWhenOurNodeIsLowest(t *testing.T) {
	ctx, l := liveTable(t)
	opts, err := dialects.Options{Owner: "waiter", AtMost: time.Minute}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	a := &attempt{l: l, name: "lowest", opts: opts, dir: l.NamePath("lowest"),
		data: holderData{Tool: toolName, Owner: opts.Owner, AtMost: opts.AtMost.Milliseconds()}}
	if err := a.create(ctx); err != nil {
		t.Fatal(err)
	}
	defer a.dropNode()
	watch, now := a.watchPredecessor(ctx)
	if !now || watch != nil {
		t.Errorf("watchPredecessor with our node the lowest = %v, %v; want no watch and a judgement at once", watch, now)
	}
}
