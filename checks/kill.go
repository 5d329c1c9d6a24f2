package checks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// killGrace is how long the killed lock may take to become free and the
// killed lease to notice (its connection check runs every second by
// default).
const killGrace = 5 * time.Second

// sessionAdmin is the backend's session-lock administration: the one way
// to find a session lock's holder (SessionLock) and to end its session
// (Kill) that unlock and locks ls use too; a skip where it has none.
func sessionAdmin(env *Env) (dialects.LockAdmin, error) {
	if lb, ok := env.Backend.(dialects.LockBreaker); ok {
		if admin := lb.LockAdmin(); admin != nil {
			return admin, nil
		}
	}
	return nil, Skipf("this database's session locks have no way to terminate the holder")
}

// holderSession is the id of the session holding the session lock name,
// as admin finds it; "" when nobody holds it.
func holderSession(ctx context.Context, admin dialects.LockAdmin, name string) (string, error) {
	e, found, err := admin.SessionLock(ctx, name)
	if err != nil || !found || e.Holder == nil {
		return "", err
	}
	return e.Holder.SessionID, nil
}

// checkKill holds a session lock, finds the holding session with the
// backend's LockAdmin, terminates it, and proves another acquirer gets
// the lock within killGrace and the killed lease's Done closes with
// ErrLeaseLost.
func checkKill(ctx context.Context, env *Env, tg target) (string, error) {
	ls, err := tg.lockers(ctx, env, 2)
	if err != nil {
		return "", err
	}
	l, other := ls[0], ls[1]
	admin, err := sessionAdmin(env)
	if err != nil {
		return "", err
	}
	name := env.Name("kill")
	victim, err := env.Acquire(ctx, l, name, dialects.Options{Owner: env.Owner("victim")})
	if err != nil {
		return "", fmt.Errorf("acquire: %w", err)
	}
	session, err := holderSession(ctx, admin, name)
	if errors.Is(err, dialects.ErrUnsupported) {
		return "", Skipf("this database's session locks have no way to terminate the holder: %v", err)
	}
	if err != nil {
		return "", fmt.Errorf("find the holder: %w", err)
	}
	if session == "" {
		return "", errors.New("the holder of a lock this run holds was not found")
	}
	start := time.Now()
	// A *dialects.PrivilegeError fails the check with its grant as remedy.
	if err := admin.Kill(ctx, session); err != nil {
		return "", fmt.Errorf("kill session %s: %w", session, err)
	}
	taker, err := env.Acquire(ctx, other, name, dialects.Options{Owner: env.Owner("taker"), Wait: killGrace, RetryEvery: 50 * time.Millisecond})
	if err != nil {
		return "", fmt.Errorf("acquire within %s after killing the holder: %w", killGrace, err)
	}
	freedAfter := time.Since(start)
	if !waitClosed(ctx, victim.Done(), killGrace) {
		return "", fmt.Errorf("the killed lease's Done did not close within %s", killGrace)
	}
	toldAfter := time.Since(start)
	if !errors.Is(victim.Err(), dialects.ErrLeaseLost) {
		return "", fmt.Errorf("the killed lease's Err is %v; want an error matching %q", victim.Err(), dialects.ErrLeaseLost)
	}
	if err := expectErr("refresh of the killed lease", victim.Refresh(ctx), dialects.ErrLeaseLost); err != nil {
		return "", err
	}
	if err := taker.Release(ctx); err != nil {
		return "", fmt.Errorf("release by the next holder: %w", err)
	}
	return fmt.Sprintf("killed session %s: lock free after %s, holder told after %s", session, ms(freedAfter), ms(toldAfter)), nil
}
