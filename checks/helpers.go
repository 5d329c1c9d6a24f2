package checks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// pollEvery is the pause between reads while a check waits for the
// database to reach a state (a lease to expire).
const pollEvery = 25 * time.Millisecond

// isClosed reports whether ch is closed, without waiting.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// waitClosed reports whether ch closes within d.
func waitClosed(ctx context.Context, ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return isClosed(ch)
	}
}

// sleep pauses for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// expectErr returns nil when err matches want, else an error saying what
// happened instead. what describes the call, e.g. "second acquire".
func expectErr(what string, err, want error) error {
	if err == nil {
		return fmt.Errorf("%s succeeded; want an error matching %q", what, want)
	}
	if !errors.Is(err, want) {
		return fmt.Errorf("%s: got %w; want an error matching %q", what, err, want)
	}
	return nil
}

// releaseIfHeld releases a lease that a broken locker granted although it
// should not have, so the check's cleanup stays simple.
func releaseIfHeld(ctx context.Context, lease dialects.Lease) {
	if lease != nil {
		_ = lease.Release(ctx)
	}
}

// refusedAcquire tries name as another owner and expects ErrHeld.
func refusedAcquire(ctx context.Context, l dialects.Locker, name, owner, what string) error {
	lease, err := l.Acquire(ctx, name, dialects.Options{AtMost: time.Minute, Owner: owner})
	if err == nil {
		releaseIfHeld(ctx, lease)
		return fmt.Errorf("%s: acquire of %s was granted while the lock is held (two holders at once)", what, short(name))
	}
	if !errors.Is(err, dialects.ErrHeld) {
		return fmt.Errorf("%s: acquire of %s: got %w; want an error matching %q", what, short(name), err, dialects.ErrHeld)
	}
	return nil
}

// inspect reads the row of name and fails when there is none.
func inspect(ctx context.Context, tl dialects.LeaseLocker, name string) (dialects.Row, error) {
	row, found, err := tl.Inspect(ctx, name)
	if err != nil {
		return row, fmt.Errorf("inspect %s: %w", short(name), err)
	}
	if !found {
		return row, fmt.Errorf("inspect %s: no row, although the lock was acquired", short(name))
	}
	return row, nil
}

// waitExpired polls the row of name until the database says its lease has
// run out (or the row is gone), for at most limit.
func waitExpired(ctx context.Context, tl dialects.LeaseLocker, name string, limit time.Duration) (dialects.Row, error) {
	deadline := time.Now().Add(limit)
	for {
		row, found, err := tl.Inspect(ctx, name)
		if err != nil {
			return row, fmt.Errorf("inspect %q: %w", name, err)
		}
		if !found || row.Expired() {
			return row, nil
		}
		if time.Now().After(deadline) {
			return row, fmt.Errorf("lease of %q still live on the database clock after %s (until %s, db now %s)",
				name, limit, stamp(row.Until), stamp(row.DBNow))
		}
		if err := sleep(ctx, pollEvery); err != nil {
			return row, err
		}
	}
}

// sameRow reports how b differs from a in owner, token, locked-at or
// until, or "" when it does not.
func sameRow(a, b dialects.Row) string {
	switch {
	case a.Owner != b.Owner:
		return fmt.Sprintf("owner changed from %q to %q", a.Owner, b.Owner)
	case a.Token != b.Token:
		return fmt.Sprintf("token changed from %d to %d", a.Token, b.Token)
	case !a.LockedAt.Equal(b.LockedAt):
		return fmt.Sprintf("locked-at changed from %s to %s", stamp(a.LockedAt), stamp(b.LockedAt))
	case !a.Until.Equal(b.Until):
		return fmt.Sprintf("lock-until changed from %s to %s", stamp(a.Until), stamp(b.Until))
	}
	return ""
}

// short quotes name for a detail line, abbreviating names longer than 60
// characters to their start and their length.
func short(name string) string {
	r := []rune(name)
	if len(r) <= 60 {
		return fmt.Sprintf("%q", name)
	}
	return fmt.Sprintf("%q…(%d characters)", string(r[:40]), len(r))
}

// stamp formats t for details: UTC with milliseconds.
func stamp(t time.Time) string { return t.UTC().Format("15:04:05.000") }

// ms formats d rounded to the millisecond.
func ms(d time.Duration) string { return d.Round(time.Millisecond).String() }

// abs returns |d|.
func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
