package checks

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// sharedLocks is how many locks the checks of shared lock connections hold
// at once through one locker (which puts them on one connection or a few).
const sharedLocks = 20

// acquireMany takes n fresh names with l and tracks the leases.
func acquireMany(ctx context.Context, env *Env, l dialects.Locker, n int, suffix string) ([]string, []dialects.Lease, error) {
	names := make([]string, n)
	leases := make([]dialects.Lease, n)
	for i := range names {
		names[i] = env.Name(fmt.Sprintf("%s-%d", suffix, i))
		lease, err := env.Acquire(ctx, l, names[i], dialects.Options{AtMost: time.Minute, Owner: env.Owner("many")})
		if err != nil {
			return nil, nil, fmt.Errorf("acquire %d of %d: %w", i+1, n, err)
		}
		leases[i] = lease
	}
	return names, leases, nil
}

// checkManyLocks holds sharedLocks locks through one locker, releases them
// in a random order, and after each release proves from an independent
// locker (connections of its own) that the released lock is free and that
// the others are still held.
func checkManyLocks(ctx context.Context, env *Env, tg target) (string, error) {
	ls, err := tg.lockers(ctx, env, 2)
	if err != nil {
		return "", err
	}
	l, other := ls[0], ls[1]
	names, leases, err := acquireMany(ctx, env, l, sharedLocks, "many")
	if err != nil {
		return "", err
	}
	order := rand.Perm(len(names))
	held := map[int]bool{}
	for i := range names {
		held[i] = true
	}
	for step, i := range order {
		if err := leases[i].Release(ctx); err != nil {
			return "", fmt.Errorf("release %d (step %d): %w", i, step+1, err)
		}
		delete(held, i)
		lease, err := other.Acquire(ctx, names[i], dialects.Options{AtMost: time.Minute, Owner: env.Owner("other")})
		if err != nil {
			return "", fmt.Errorf("step %d: the released lock %d is not free for another holder: %w", step+1, i, err)
		}
		if err := lease.Release(ctx); err != nil {
			return "", fmt.Errorf("release by the other holder: %w", err)
		}
		for j := range held {
			if err := refusedAcquire(ctx, other, names[j], env.Owner("other"), fmt.Sprintf("step %d, after lock %d was released", step+1, i)); err != nil {
				return "", err
			}
			if isClosed(leases[j].Done()) {
				return "", fmt.Errorf("step %d: releasing lock %d ended the lease of lock %d: %v", step+1, i, j, leases[j].Err())
			}
			break // one still-held lock per step: the last steps cover all
		}
	}
	detail := fmt.Sprintf("%d locks held at once, released in random order; each release freed only its own lock", len(names))
	if c, ok := l.(interface{ Conns() int }); ok {
		detail += fmt.Sprintf(" (%d lock connections)", c.Conns())
	}
	return detail, nil
}

// checkSharedLoss holds sharedLocks locks through one locker, kills the
// session holding one of them, and proves that every lease on that
// session's connection is told (Done closed, Err matching ErrLeaseLost)
// and that their locks are free for another holder; leases on other
// connections of the locker, if any, stay held.
func checkSharedLoss(ctx context.Context, env *Env, tg target) (string, error) {
	ls, err := tg.lockers(ctx, env, 2)
	if err != nil {
		return "", err
	}
	l, other := ls[0], ls[1]
	admin, err := sessionAdmin(env)
	if err != nil {
		return "", err
	}
	names, leases, err := acquireMany(ctx, env, l, sharedLocks, "shared-loss")
	if err != nil {
		return "", err
	}
	sessions := make([]string, len(names))
	for i, name := range names {
		if sessions[i], err = holderSession(ctx, admin, name); err != nil || sessions[i] == "" {
			return "", fmt.Errorf("find the holder of lock %d: %q, %v", i, sessions[i], err)
		}
	}
	victim := sessions[0]
	start := time.Now()
	if err := admin.Kill(ctx, victim); err != nil {
		return "", fmt.Errorf("kill session %s: %w", victim, err)
	}
	var slowest time.Duration
	onVictim, survivors := 0, 0
	for i, lease := range leases {
		if sessions[i] != victim {
			survivors++
			continue
		}
		onVictim++
		if !waitClosed(ctx, lease.Done(), killGrace) {
			return "", fmt.Errorf("lock %d shared the killed session, but its lease's Done did not close within %s", i, killGrace)
		}
		if d := time.Since(start); d > slowest {
			slowest = d
		}
		if !errors.Is(lease.Err(), dialects.ErrLeaseLost) {
			return "", fmt.Errorf("lock %d: Err after its connection was killed is %v; want ErrLeaseLost", i, lease.Err())
		}
		taken, err := other.Acquire(ctx, names[i], dialects.Options{AtMost: time.Minute, Wait: killGrace, Owner: env.Owner("taker")})
		if err != nil {
			return "", fmt.Errorf("lock %d is not free after its session was killed: %w", i, err)
		}
		if err := taken.Release(ctx); err != nil {
			return "", err
		}
	}
	for i, lease := range leases {
		if sessions[i] == victim {
			continue
		}
		if isClosed(lease.Done()) {
			return "", fmt.Errorf("lock %d on session %s ended when session %s was killed: %v", i, sessions[i], victim, lease.Err())
		}
	}
	return fmt.Sprintf("killed session %s: its %d leases were told within %s; %d leases on other sessions stayed held", victim, onVictim, ms(slowest), survivors), nil
}

// handoverPoll is the RetryEvery of checkHandover's waiter: a waiter that
// polls would get the lock only that long after its first refusal.
const handoverPoll = time.Second

// checkHandover proves a waiter gets a lock as soon as its holder releases
// it, not at its next poll: the waiter asks with RetryEvery of 1s, the
// holder releases 200ms later, and the waiter must hold the lock well
// before the second.
func checkHandover(ctx context.Context, env *Env, tg target) (string, error) {
	ls, err := tg.lockers(ctx, env, 2)
	if err != nil {
		return "", err
	}
	l, waiter := ls[0], ls[1]
	name := env.Name("handover")
	lease, err := env.Acquire(ctx, l, name, dialects.Options{AtMost: time.Minute, Owner: env.Owner("holder")})
	if err != nil {
		return "", fmt.Errorf("acquire: %w", err)
	}
	const releaseAfter = 200 * time.Millisecond
	var releasedAt time.Time
	released := make(chan error, 1)
	start := time.Now()
	go func() {
		if err := sleep(ctx, releaseAfter); err != nil {
			released <- err
			return
		}
		releasedAt = time.Now()
		released <- lease.Release(ctx)
	}()
	got, err := env.Acquire(ctx, waiter, name, dialects.Options{AtMost: time.Minute, Wait: 10 * time.Second, RetryEvery: handoverPoll, Owner: env.Owner("waiter")})
	gotAt := time.Now()
	if rerr := <-released; rerr != nil {
		return "", fmt.Errorf("release by the holder: %w", rerr)
	}
	if err != nil {
		return "", fmt.Errorf("waiting acquire: %w", err)
	}
	if err := got.Release(ctx); err != nil {
		return "", fmt.Errorf("release by the waiter: %w", err)
	}
	handover := gotAt.Sub(releasedAt)
	detail := fmt.Sprintf("the waiter got the lock %s after its release", ms(handover))
	if gotAt.Sub(start) >= handoverPoll {
		if sw, ok := waiter.(sqlkit.ServerWaiter); ok && sw.WaitsOnServer() {
			return detail, fmt.Errorf("the waiter got the lock only at its next poll (%s after the release), though the database waits on the server", ms(handover))
		}
		return detail, Warnf("the database has no server-side wait: a release reaches a waiter at its next poll (%s)", ms(handover))
	}
	return detail, nil
}
