package redis_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/redis"
)

// Refreshes called at once share pipelines, and each script run in a
// pipeline still checks its own key: on both layouts, a lease whose key
// another owner took over is reported lost and the key stays the other
// owner's, a lease whose key expired is reported lost, every other lease
// is renewed (its key's expiry moved forward); after SCRIPT FLUSH the
// pipelines load their scripts again.
func TestRefreshPipelinesLive(t *testing.T) {
	b, plain := openLive(t), liveClient(t)
	for _, preset := range []string{dialects.PresetSchedlock, dialects.PresetShedlock} {
		t.Run(preset, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			table := "schedlock_pipe_" + dialects.NewOwner()[len(dialects.NewOwner())-8:]
			tl, err := b.Locker(dialects.StrategyTable, dialects.Table{Preset: preset, Name: table})
			if err != nil {
				t.Fatal(err)
			}
			l := tl.(*redis.Locker)
			defer l.DropTable(context.Background())
			const many = 24
			leases := make([]dialects.Lease, many)
			for i := range leases {
				if leases[i], err = l.Acquire(ctx, fmt.Sprintf("pipe-%d", i), dialects.Options{Owner: "a", AtMost: time.Minute}); err != nil {
					t.Fatal(err)
				}
			}
			// pipe-0: expired and taken by b; pipe-1: expired.
			for _, n := range []string{"pipe-0", "pipe-1"} {
				if ok, err := l.Expire(ctx, n); err != nil || !ok {
					t.Fatalf("expire %s = %v, %v", n, ok, err)
				}
			}
			if _, err := l.Acquire(ctx, "pipe-0", dialects.Options{Owner: "b", AtMost: time.Minute}); err != nil {
				t.Fatal(err)
			}
			before := map[string]time.Time{}
			for i := range leases {
				row, found, err := l.Inspect(ctx, fmt.Sprintf("pipe-%d", i))
				if err != nil {
					t.Fatal(err)
				}
				if found {
					before[row.Name] = row.Until
				}
			}
			if err := plain.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(20 * time.Millisecond) // so that a renewed expiry is a later one
			trips := l.RefreshStatements()
			start := make(chan struct{})
			errs := make([]error, many)
			var wg sync.WaitGroup
			for i, lease := range leases {
				wg.Go(func() {
					<-start
					errs[i] = lease.Refresh(ctx)
				})
			}
			close(start)
			wg.Wait()
			if sent := l.RefreshStatements() - trips; sent < 1 || sent >= many {
				t.Errorf("%d refreshes at once took %d round trips, want them to share pipelines", many, sent)
			}
			for i, err := range errs {
				name := fmt.Sprintf("pipe-%d", i)
				lost := i < 2
				if lost != errors.Is(err, dialects.ErrLeaseLost) || (!lost && err != nil) {
					t.Errorf("refresh of %s: %v; want lost %v", name, err, lost)
				}
				row, found, err := l.Inspect(ctx, name)
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case i == 0 && (!found || row.Owner != "b" || !row.Until.Equal(before[name])):
					t.Errorf("%s: %+v, want b's key untouched", name, row)
				case i > 1 && (!found || !row.Until.After(before[name])):
					t.Errorf("%s: until %s, was %s; want it renewed", name, row.Until, before[name])
				}
			}
			for _, lease := range leases[2:] {
				if err := lease.Release(ctx); err != nil {
					t.Errorf("release %s: %v", lease.Name(), err)
				}
			}
		})
	}
}
