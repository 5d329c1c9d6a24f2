package checks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// checkAcquire acquires and releases a lock, checks what the lease reports
// (and, on a table, what the row holds), and proves the release freed it.
func checkAcquire(ctx context.Context, env *Env, tg target) (string, error) {
	l, err := tg.locker(ctx, env)
	if err != nil {
		return "", err
	}
	name, owner := env.Name("acquire"), env.Owner("A")
	const atMost = 10 * time.Second
	before := time.Now()
	lease, err := env.Acquire(ctx, l, name, dialects.Options{AtMost: atMost, Owner: owner})
	if err != nil {
		return "", fmt.Errorf("acquire of a free lock: %w", err)
	}
	took := time.Since(before)
	switch {
	case lease.Name() != name:
		return "", fmt.Errorf("lease name is %q, want %q", lease.Name(), name)
	case lease.Owner() != owner:
		return "", fmt.Errorf("lease owner is %q, want %q", lease.Owner(), owner)
	case isClosed(lease.Done()):
		return "", errors.New("Done is closed right after acquire")
	case lease.Err() != nil:
		return "", fmt.Errorf("Err is %v right after acquire, want nil", lease.Err())
	}
	if tg.isTable() {
		if err := checkTableAcquire(ctx, env, tg, lease, atMost, before, took); err != nil {
			return "", err
		}
	} else if !lease.Until().IsZero() {
		return "", fmt.Errorf("session lease reports an end %s; session locks have none", lease.Until())
	}
	if err := lease.Release(ctx); err != nil {
		return "", fmt.Errorf("release: %w", err)
	}
	if !waitClosed(ctx, lease.Done(), time.Second) {
		return "", errors.New("Done did not close after release")
	}
	if lease.Err() != nil {
		return "", fmt.Errorf("Err is %v after a clean release, want nil", lease.Err())
	}
	again, err := env.Acquire(ctx, l, name, dialects.Options{AtMost: atMost, Owner: env.Owner("B")})
	if err != nil {
		return "", fmt.Errorf("acquire after release (the release did not free the lock): %w", err)
	}
	if err := again.Release(ctx); err != nil {
		return "", fmt.Errorf("release of the second lease: %w", err)
	}
	return fmt.Sprintf("acquired in %s, released, re-acquired by another owner", ms(took)), nil
}

// checkTableAcquire checks the row and the lease end after an acquire.
func checkTableAcquire(ctx context.Context, env *Env, tg target, lease dialects.Lease, atMost time.Duration, before time.Time, took time.Duration) error {
	tl, err := tg.tableLocker(ctx, env)
	if err != nil {
		return err
	}
	row, err := inspect(ctx, tl, lease.Name())
	if err != nil {
		return err
	}
	if row.Owner != lease.Owner() {
		return fmt.Errorf("row owner is %q, want %q", row.Owner, lease.Owner())
	}
	if row.Expired() {
		return fmt.Errorf("row is expired right after acquire (until %s, db now %s)", stamp(row.Until), stamp(row.DBNow))
	}
	if span := row.Until.Sub(row.LockedAt); abs(span-atMost) > time.Second {
		return remedied(fmt.Errorf("row lease is %s (lock-until minus locked-at), want the at-most of %s", ms(span), atMost),
			"the lease must be locked-at plus at-most in milliseconds on the database clock")
	}
	if tok, ok := lease.Token(); ok && row.HasToken && tok != row.Token {
		return fmt.Errorf("lease token %d differs from the row's %d", tok, row.Token)
	}
	until := lease.Until()
	if until.IsZero() {
		return errors.New("table lease reports no end (Until is zero)")
	}
	if until.After(before.Add(took).Add(atMost)) || until.Before(before.Add(atMost).Add(-time.Second)) {
		return fmt.Errorf("lease Until %s is not the acquire time plus at-most (%s…%s)", stamp(until), stamp(before.Add(atMost)), stamp(before.Add(took).Add(atMost)))
	}
	return nil
}

// checkContend holds a lock and proves a second acquirer is refused at
// once, with the holder named where the strategy knows it.
func checkContend(ctx context.Context, env *Env, tg target) (string, error) {
	ls, err := tg.lockers(ctx, env, 2)
	if err != nil {
		return "", err
	}
	l, other := ls[0], ls[1]
	name, owner := env.Name("contend"), env.Owner("A")
	lease, err := env.Acquire(ctx, l, name, dialects.Options{AtMost: time.Minute, Owner: owner})
	if err != nil {
		return "", fmt.Errorf("acquire: %w", err)
	}
	start := time.Now()
	second, err := other.Acquire(ctx, name, dialects.Options{AtMost: time.Minute, Owner: env.Owner("B")})
	took := time.Since(start)
	if err == nil {
		releaseIfHeld(ctx, second)
		return "", errors.New("a second acquirer got the held lock: two holders at once")
	}
	if !errors.Is(err, dialects.ErrHeld) {
		return "", fmt.Errorf("second acquire: got %w; want an error matching %q", err, dialects.ErrHeld)
	}
	if err := lease.Refresh(ctx); err != nil {
		return "", fmt.Errorf("the first holder lost the lock after a refused acquire: %w", err)
	}
	var held *dialects.HeldError
	holder, findsHolders := "", false
	if errors.As(err, &held) {
		holder = held.Holder
	}
	if holder == "" && !tg.isTable() {
		// A session refusal names nobody (one round trip); the holder
		// is looked up on request, as unlock and locks ls find it.
		if admin, err := sessionAdmin(env); err == nil {
			findsHolders = true
			holder, _ = holderSession(ctx, admin, name)
		}
	}
	detail := fmt.Sprintf("refused in %s", ms(took))
	if holder != "" {
		detail += ", holder " + holder
	}
	if took > time.Second {
		return detail, remedied(Warnf("a refused try took %s; a try without wait should answer at once", ms(took)),
			"the database clamps lock waits (TiDB GET_LOCK waits at least 1s): prefer the table strategy")
	}
	if tg.isTable() {
		switch {
		case holder == "":
			return detail, Warnf("the refusal does not name the holder (want a *dialects.HeldError with Holder %q)", owner)
		case holder != owner:
			return detail, fmt.Errorf("the refusal names holder %q, but %q holds the lock", holder, owner)
		}
	} else if findsHolders && holder == "" {
		return detail, Warnf("the dialect can find holders, but the refusal names none")
	}
	return detail, nil
}

// checkWait proves Acquire with a wait gives up after about that wait, and
// gets the lock when it is freed during the wait.
func checkWait(ctx context.Context, env *Env, tg target) (string, error) {
	ls, err := tg.lockers(ctx, env, 2)
	if err != nil {
		return "", err
	}
	l, other := ls[0], ls[1]
	name := env.Name("wait")
	lease, err := env.Acquire(ctx, l, name, dialects.Options{AtMost: time.Minute, Owner: env.Owner("A")})
	if err != nil {
		return "", fmt.Errorf("acquire: %w", err)
	}
	const wait = 400 * time.Millisecond
	start := time.Now()
	second, err := other.Acquire(ctx, name, dialects.Options{AtMost: time.Minute, Wait: wait, RetryEvery: 50 * time.Millisecond, Owner: env.Owner("B")})
	gaveUp := time.Since(start)
	if err == nil {
		releaseIfHeld(ctx, second)
		return "", errors.New("a waiting acquirer got the held lock: two holders at once")
	}
	if !errors.Is(err, dialects.ErrHeld) {
		return "", fmt.Errorf("waiting acquire: got %w; want an error matching %q", err, dialects.ErrHeld)
	}
	if gaveUp < wait-100*time.Millisecond || gaveUp > wait+2*time.Second {
		return "", fmt.Errorf("acquire with a %s wait gave up after %s", wait, ms(gaveUp))
	}

	const freeAfter = 300 * time.Millisecond
	released := make(chan error, 1)
	go func() {
		if err := sleep(ctx, freeAfter); err != nil {
			released <- err
			return
		}
		released <- lease.Release(ctx)
	}()
	start = time.Now()
	third, err := env.Acquire(ctx, other, name, dialects.Options{AtMost: time.Minute, Wait: 5 * time.Second, RetryEvery: 50 * time.Millisecond, Owner: env.Owner("C")})
	got := time.Since(start)
	if rerr := <-released; rerr != nil {
		return "", fmt.Errorf("release by the first holder: %w", rerr)
	}
	if err != nil {
		return "", fmt.Errorf("acquire waiting 5s for a lock freed after %s: %w", freeAfter, err)
	}
	if got < freeAfter-100*time.Millisecond {
		return "", fmt.Errorf("a waiting acquirer got the lock after %s, before its holder released it at %s", ms(got), freeAfter)
	}
	if err := third.Release(ctx); err != nil {
		return "", fmt.Errorf("release: %w", err)
	}
	return fmt.Sprintf("gave up after %s of a %s wait; got a lock freed at %s after %s", ms(gaveUp), wait, freeAfter, ms(got)), nil
}

// checkRefresh proves Refresh extends a table lease on the database clock
// (and keeps owner and token), or proves a session lock is still held.
func checkRefresh(ctx context.Context, env *Env, tg target) (string, error) {
	l, err := tg.locker(ctx, env)
	if err != nil {
		return "", err
	}
	name := env.Name("refresh")
	const atMost = 10 * time.Second
	lease, err := env.Acquire(ctx, l, name, dialects.Options{AtMost: atMost, Owner: env.Owner("A")})
	if err != nil {
		return "", fmt.Errorf("acquire: %w", err)
	}
	if !tg.isTable() {
		if err := lease.Refresh(ctx); err != nil {
			return "", fmt.Errorf("refresh of a held session lock: %w", err)
		}
		if isClosed(lease.Done()) {
			return "", errors.New("Done closed after a successful refresh")
		}
		return "refresh proved the session still holds the lock", nil
	}
	tl, err := tg.tableLocker(ctx, env)
	if err != nil {
		return "", err
	}
	r1, err := inspect(ctx, tl, name)
	if err != nil {
		return "", err
	}
	untilBefore := lease.Until()
	// A whole-second lease-end column rounds each lease end up, so the
	// pause is long enough to move it by a second or more there.
	res := timeResolution(tl)
	pause := 150*time.Millisecond + 2*res
	if err := sleep(ctx, pause); err != nil {
		return "", err
	}
	if err := lease.Refresh(ctx); err != nil {
		return "", fmt.Errorf("refresh of a held lease: %w", err)
	}
	r2, err := inspect(ctx, tl, name)
	if err != nil {
		return "", err
	}
	moved := r2.Until.Sub(r1.Until)
	switch {
	case moved < pause/2:
		return "", fmt.Errorf("refresh moved lock-until by %s after a %s pause; want it extended from the database's now", ms(moved), pause)
	case abs(r2.Until.Sub(r2.DBNow)-atMost) > time.Second+res:
		return "", fmt.Errorf("after refresh the lease runs %s past the database's now, want about %s", ms(r2.Until.Sub(r2.DBNow)), atMost)
	case r2.Owner != r1.Owner:
		return "", fmt.Errorf("refresh changed the owner from %q to %q", r1.Owner, r2.Owner)
	case r2.Token != r1.Token:
		return "", fmt.Errorf("refresh changed the token from %d to %d", r1.Token, r2.Token)
	case !lease.Until().After(untilBefore):
		return "", fmt.Errorf("lease Until did not move forward (%s before, %s after)", stamp(untilBefore), stamp(lease.Until()))
	}
	return fmt.Sprintf("lock-until moved %s forward on the database clock", ms(moved)), nil
}

// checkRefreshLost proves Refresh fails with ErrLeaseLost once the lease
// ended: after release (every strategy) and, on a table, after the lease
// expired without being refreshed.
func checkRefreshLost(ctx context.Context, env *Env, tg target) (string, error) {
	l, err := tg.locker(ctx, env)
	if err != nil {
		return "", err
	}
	name := env.Name("refresh-lost")
	lease, err := env.Acquire(ctx, l, name, dialects.Options{AtMost: time.Minute, Owner: env.Owner("A")})
	if err != nil {
		return "", fmt.Errorf("acquire: %w", err)
	}
	if err := lease.Release(ctx); err != nil {
		return "", fmt.Errorf("release: %w", err)
	}
	if err := expectErr("refresh after release", lease.Refresh(ctx), dialects.ErrLeaseLost); err != nil {
		return "", err
	}
	if !tg.isTable() {
		return "refresh after release reported the lease lost", nil
	}

	tl, err := tg.tableLocker(ctx, env)
	if err != nil {
		return "", err
	}
	name = env.Name("refresh-expired")
	lease, err = env.Acquire(ctx, l, name, dialects.Options{AtMost: 300 * time.Millisecond, Owner: env.Owner("A")})
	if err != nil {
		return "", fmt.Errorf("acquire with a 300ms at-most: %w", err)
	}
	expired, err := waitExpired(ctx, tl, name, 5*time.Second)
	if err != nil {
		return "", err
	}
	if err := expectErr("refresh after the lease expired", lease.Refresh(ctx), dialects.ErrLeaseLost); err != nil {
		return "", err
	}
	after, err := inspect(ctx, tl, name)
	if err != nil {
		return "", err
	}
	if diff := sameRow(expired, after); diff != "" {
		return "", fmt.Errorf("a refused refresh changed the row: %s", diff)
	}
	if !waitClosed(ctx, lease.Done(), time.Second) {
		return "", errors.New("Done is still open after refresh reported the lease lost")
	}
	if !errors.Is(lease.Err(), dialects.ErrLeaseLost) {
		return "", fmt.Errorf("Err is %v after the lease was lost; want an error matching %q", lease.Err(), dialects.ErrLeaseLost)
	}
	return "refresh after release and after expiry reported the lease lost; the row stayed unchanged", nil
}

// checkReleaseTwice proves a second Release fails with ErrLeaseLost.
func checkReleaseTwice(ctx context.Context, env *Env, tg target) (string, error) {
	l, err := tg.locker(ctx, env)
	if err != nil {
		return "", err
	}
	lease, err := env.Acquire(ctx, l, env.Name("release-twice"), dialects.Options{AtMost: time.Minute, Owner: env.Owner("A")})
	if err != nil {
		return "", fmt.Errorf("acquire: %w", err)
	}
	if err := lease.Release(ctx); err != nil {
		return "", fmt.Errorf("first release: %w", err)
	}
	if err := expectErr("second release", lease.Release(ctx), dialects.ErrLeaseLost); err != nil {
		return "", err
	}
	return "second release reported the lease lost", nil
}

// checkInvalid proves bad input is refused with ErrInvalid before anything
// is locked.
func checkInvalid(ctx context.Context, env *Env, tg target) (string, error) {
	l, err := tg.locker(ctx, env)
	if err != nil {
		return "", err
	}
	name := env.Name("invalid")
	cases := []struct {
		what string
		name string
		opts dialects.Options
	}{
		{"empty name", "", dialects.Options{}},
		{"name that is not UTF-8", name + "\xff", dialects.Options{}},
		{"negative at-most", name, dialects.Options{AtMost: -time.Second}},
		{"negative at-least", name, dialects.Options{AtLeast: -time.Second}},
		{"negative wait", name, dialects.Options{Wait: -time.Second}},
		{"at-least above at-most", name, dialects.Options{AtMost: time.Second, AtLeast: time.Minute}},
	}
	var errs []error
	for _, c := range cases {
		lease, err := l.Acquire(ctx, c.name, c.opts)
		if err == nil {
			releaseIfHeld(ctx, lease)
		}
		if e := expectErr("acquire with "+c.what, err, dialects.ErrInvalid); e != nil {
			errs = append(errs, e)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d kinds of bad input refused", len(cases)), nil
}
