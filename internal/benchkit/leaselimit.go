package benchkit

import (
	"context"
	"fmt"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
)

// LeaseRoomer is a locker that can say how many more leases its store's
// memory holds (the Redis backend: maxmemory).
type LeaseRoomer interface {
	LeaseRoom(ctx context.Context) (room int, limit string, limited bool, err error)
}

// LeaseLimitError is a --leases measurement asked for more leases than
// the store can hold, or one handle can keep renewed. It matches
// dialects.ErrInvalid.
type LeaseLimitError struct {
	Asked, Most int
	Limit       string // the limit and its values
}

func (e *LeaseLimitError) Error() string {
	return fmt.Sprintf("%d leases is above the %d that fit: %s", e.Asked, e.Most, e.Limit)
}

// Is makes errors.Is(err, dialects.ErrInvalid) true.
func (e *LeaseLimitError) Is(target error) bool { return target == dialects.ErrInvalid }

// leaseLimit returns the most leases of LeaseAtMost that locker can hold
// and keep renewed, and the limit that says so; limited is false when no
// limit can be computed. The lease table's own bound is one handle's
// renewals: at most BatchSize leases per statement and one statement per
// locktable.RefreshWindow, each lease renewed every LeaseAtMost/3. A
// store that knows its memory limit says how many more leases fit.
func leaseLimit(ctx context.Context, locker dialects.Locker) (most int, limit string, limited bool, err error) {
	switch l := locker.(type) {
	case *locktable.Locker:
		size := l.BatchSize()
		if size < 2 {
			return 0, "", false, nil
		}
		perSecond := size * int(time.Second/locktable.RefreshWindow)
		every := LeaseAtMost / 3
		most = perSecond * int(every/time.Second)
		return most, fmt.Sprintf("one handle renews at most %d leases a second on %s (%d a statement, one statement per %s) and a lease of %s is renewed every %s",
			perSecond, l.Schema().Table, size, locktable.RefreshWindow, LeaseAtMost, every), true, nil
	case LeaseRoomer:
		return l.LeaseRoom(ctx)
	}
	return 0, "", false, nil
}
