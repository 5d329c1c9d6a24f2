package checks

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/memory"
)

// hostTimesBackend is the memory backend as a store without a clock of
// its own shows it (Row.HostTimes), whose release frees the lock cut
// earlier than the at-least asked for while its rows still say the
// whole at-least: a store that counts at-least from before the grant.
type hostTimesBackend struct {
	*memory.Backend
	cut time.Duration
}

func (b *hostTimesBackend) Locker(s dialects.Strategy, t dialects.Table) (dialects.Locker, error) {
	l, err := b.Backend.Locker(s, t)
	if err != nil {
		return nil, err
	}
	return &hostTimesLocker{creatingLocker: l.(creatingLocker), cut: b.cut}, nil
}

// creatingLocker is a lease locker that creates its table (the memory
// store's), as the wrappers of these tests pass it on.
type creatingLocker interface {
	dialects.LeaseLocker
	dialects.TableCreator
}

type hostTimesLocker struct {
	creatingLocker
	cut time.Duration
}

func (l *hostTimesLocker) Acquire(ctx context.Context, name string, opts dialects.Options) (dialects.Lease, error) {
	if opts.AtLeast > 0 {
		opts.AtLeast -= l.cut
	}
	return l.creatingLocker.Acquire(ctx, name, opts)
}

func (l *hostTimesLocker) Inspect(ctx context.Context, name string) (dialects.Row, bool, error) {
	r, found, err := l.creatingLocker.Inspect(ctx, name)
	r.HostTimes = true
	if !r.Until.IsZero() {
		r.Until = r.Until.Add(l.cut)
	}
	return r, found, err
}

// The at-least check on a store whose rows carry host times: it passes
// where the lock stays held for the at-least, and fails, naming the gap
// on this host's clock, where the next holder gets it early although
// the rows promise the whole at-least.
func TestAtLeastOnHostTimes(t *testing.T) {
	for _, tt := range []struct {
		name string
		cut  time.Duration
		want Status
	}{
		{"held for the at-least", 0, StatusPass},
		{"freed 300ms early", 300 * time.Millisecond, StatusFail},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// The check warns instead of judging when this machine was
			// too slow to observe the at-least; a few tries give it a
			// quiet moment, and a warning on every try fails the test.
			var res Result
			for try := 0; try < 5; try++ {
				mem, err := memory.Open("hosttimes-" + dialects.NewOwner())
				if err != nil {
					t.Fatal(err)
				}
				rep, err := Run(t.Context(), Config{Backend: &hostTimesBackend{Backend: mem, cut: tt.cut}, Only: []string{"table.at-least"}})
				if err != nil {
					t.Fatal(err)
				}
				if res = results(rep)["table.at-least"]; res.Status != StatusWarn {
					break
				}
			}
			if res.Status != tt.want {
				t.Fatalf("at-least = %s (%s), want %s", res.Status, res.Detail, tt.want)
			}
			if tt.want == StatusFail && !strings.Contains(res.Detail, "within") {
				t.Errorf("the failure does not give the gap on the host clock: %s", res.Detail)
			}
			if tt.want == StatusPass && !strings.Contains(res.Detail, "host clock") {
				t.Errorf("the pass does not say the gap is on the host clock: %s", res.Detail)
			}
		})
	}
}
