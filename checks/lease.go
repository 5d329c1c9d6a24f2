package checks

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// checkAtMost proves a lease that is never refreshed ends at at-most: it
// is refused to others before, taken over after, its holder's Done closes
// with ErrLeaseLost, and the old holder's Release is refused as lost
// without touching the new holder's row.
func checkAtMost(ctx context.Context, env *Env, tg target) (string, error) {
	tl, err := tg.tableLocker(ctx, env)
	if err != nil {
		return "", err
	}
	name := env.Name("at-most")
	const atMost = 300 * time.Millisecond
	old, err := env.Acquire(ctx, tl, name, dialects.Options{AtMost: atMost, Owner: env.Owner("A")})
	if err != nil {
		return "", fmt.Errorf("acquire with a %s at-most: %w", atMost, err)
	}
	if err := refusedAcquire(ctx, tl, name, env.Owner("B"), "before at-most has passed"); err != nil {
		return "", err
	}
	if _, err := waitExpired(ctx, tl, name, 5*time.Second); err != nil {
		return "", err
	}
	ownerB := env.Owner("B")
	taker, err := env.Acquire(ctx, tl, name, dialects.Options{AtMost: time.Minute, Owner: ownerB})
	if err != nil {
		return "", fmt.Errorf("acquire after the %s lease expired on the database clock (an expired lease must be taken over): %w", atMost, err)
	}
	row, err := inspect(ctx, tl, name)
	if err != nil {
		return "", err
	}
	if row.Owner != ownerB {
		return "", fmt.Errorf("after the takeover the row names %q, want %q", row.Owner, ownerB)
	}
	if !waitClosed(ctx, old.Done(), 2*time.Second) {
		return "", errors.New("the expired lease's Done did not close within 2s after another owner took the lock")
	}
	if !errors.Is(old.Err(), dialects.ErrLeaseLost) {
		return "", fmt.Errorf("the expired lease's Err is %v; want an error matching %q", old.Err(), dialects.ErrLeaseLost)
	}
	if err := expectErr("release of the expired lease", old.Release(ctx), dialects.ErrLeaseLost); err != nil {
		return "", err
	}
	after, err := inspect(ctx, tl, name)
	if err != nil {
		return "", err
	}
	if diff := sameRow(row, after); diff != "" {
		return "", fmt.Errorf("the old holder's release changed the new holder's row: %s", diff)
	}
	if err := refusedAcquire(ctx, tl, name, env.Owner("C"), "after the old holder's release"); err != nil {
		return "", err
	}
	detail := fmt.Sprintf("taken over after the %s lease expired; old holder told (%v)", atMost, old.Err())
	if ta, ok := old.Token(); ok {
		tb, _ := taker.Token()
		if tb <= ta {
			return detail, fmt.Errorf("the takeover's token %d is not above the expired lease's %d", tb, ta)
		}
		detail += fmt.Sprintf("; token %d → %d", ta, tb)
	}
	if err := taker.Release(ctx); err != nil {
		return detail, fmt.Errorf("release by the new holder: %w", err)
	}
	return detail, nil
}

// checkAtLeast proves an early release keeps the lock until locked-at plus
// at-least, on the database clock, and frees it after. Where the store
// keeps no time (Row.HostTimes: etcd), locked-at is the acquirer's host
// time before its request and the grant came later by an unknown delay:
// the gap is then measured on this host's clock from that locked-at to
// when the next holder's acquire returned, an upper bound of the true gap
// that no correct store falls below, and the kept lock must promise at
// least at-least after locked-at.
func checkAtLeast(ctx context.Context, env *Env, tg target) (string, error) {
	tl, err := tg.tableLocker(ctx, env)
	if err != nil {
		return "", err
	}
	name := env.Name("at-least")
	const atLeast = 600 * time.Millisecond
	start := time.Now()
	lease, err := env.Acquire(ctx, tl, name, dialects.Options{AtMost: 10 * time.Second, AtLeast: atLeast, Owner: env.Owner("A")})
	if err != nil {
		return "", fmt.Errorf("acquire with a %s at-least: %w", atLeast, err)
	}
	acquired := time.Now()
	first, err := inspect(ctx, tl, name)
	if err != nil {
		return "", err
	}
	if err := lease.Release(ctx); err != nil {
		return "", fmt.Errorf("early release: %w", err)
	}
	if !waitClosed(ctx, lease.Done(), time.Second) || lease.Err() != nil {
		return "", fmt.Errorf("after a clean release Done must close and Err be nil (Err: %v)", lease.Err())
	}
	released, err := inspect(ctx, tl, name)
	if err != nil {
		return "", err
	}
	if took := time.Since(start); took > atLeast/2 {
		return "", Warnf("acquire, inspect and release took %s, too slow to observe an at-least of %s", ms(took), atLeast)
	}
	if released.Expired() {
		return "", fmt.Errorf("the early release freed the lock at once (until %s, locked at %s); it must stay held for the at-least of %s",
			stamp(released.Until), stamp(released.LockedAt), atLeast)
	}
	span := released.Until.Sub(released.LockedAt)
	// On a whole-second table at-least is bound a second longer and the
	// lease end rounded up to the second (timeResolution).
	lo, hi := atLeast-100*time.Millisecond, atLeast+100*time.Millisecond+2*timeResolution(tl)
	if first.HostTimes {
		// The grant came after locked-at, within the acquire's call.
		lo, hi = atLeast, hi+acquired.Sub(start)
	}
	if span < lo || span > hi {
		return "", fmt.Errorf("after an early release the lease runs %s past locked-at, want the at-least of %s (%s…%s)", ms(span), atLeast, ms(lo), ms(hi))
	}
	if err := refusedAcquire(ctx, tl, name, env.Owner("B"), "right after an early release"); err != nil {
		return "", err
	}
	taker, err := env.Acquire(ctx, tl, name, dialects.Options{AtMost: time.Minute, Wait: 5 * time.Second, RetryEvery: 50 * time.Millisecond, Owner: env.Owner("B")})
	if err != nil {
		return "", fmt.Errorf("acquire after at-least should have passed: %w", err)
	}
	took := time.Now()
	second, err := inspect(ctx, tl, name)
	if err != nil {
		return "", err
	}
	var detail string
	if first.HostTimes {
		asked := first.LockedAt
		if asked.Before(start) {
			asked = start
		}
		gap := took.Sub(asked)
		if gap < atLeast {
			return "", fmt.Errorf("the next holder had the lock within %s of the first one's request, before the at-least of %s (on this host's clock: the store keeps no time)", ms(gap), atLeast)
		}
		detail = fmt.Sprintf("held until at-least %s after an early release; next holder had it within %s of the first one's request (host clock: the store keeps no time)", atLeast, ms(gap))
	} else {
		gap := second.LockedAt.Sub(first.LockedAt)
		if gap < atLeast-10*time.Millisecond {
			return "", fmt.Errorf("the next holder got the lock %s after the first one took it, before the at-least of %s", ms(gap), atLeast)
		}
		detail = fmt.Sprintf("held until at-least %s after an early release; next holder locked %s after the first", atLeast, ms(gap))
	}
	if err := taker.Release(ctx); err != nil {
		return "", fmt.Errorf("release by the next holder: %w", err)
	}
	return detail, nil
}

// checkToken proves the fencing token grows on every acquire where the
// strategy has one, and that Token reports false where it has none.
func checkToken(ctx context.Context, env *Env, tg target) (string, error) {
	l, err := tg.locker(ctx, env)
	if err != nil {
		return "", err
	}
	wantToken := false
	if tg.isTable() {
		tl, err := tg.tableLocker(ctx, env)
		if err != nil {
			return "", err
		}
		wantToken = tl.Schema().TokenCol != ""
	}
	name := env.Name("token")
	var tokens []string
	var prev int64
	for i := range 3 {
		lease, err := env.Acquire(ctx, l, name, dialects.Options{AtMost: time.Minute, Owner: env.Owner("A")})
		if err != nil {
			return "", fmt.Errorf("acquire #%d: %w", i+1, err)
		}
		tok, ok := lease.Token()
		switch {
		case ok != wantToken && tg.isTable():
			return "", fmt.Errorf("acquire #%d: Token reports %v, want %v for a table %s a token column", i+1, ok, wantToken, map[bool]string{true: "with", false: "without"}[wantToken])
		case ok && i > 0 && tok <= prev:
			return "", fmt.Errorf("acquire #%d got token %d, not above the previous %d", i+1, tok, prev)
		}
		if ok {
			tokens = append(tokens, fmt.Sprint(tok))
		}
		prev = tok
		if err := lease.Release(ctx); err != nil {
			return "", fmt.Errorf("release #%d: %w", i+1, err)
		}
	}
	if len(tokens) == 0 {
		return "no fencing token, as documented for this strategy and table", nil
	}
	return "tokens " + strings.Join(tokens, " < "), nil
}
