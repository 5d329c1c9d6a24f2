package checks

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// ownerStep is one call that must be refused; want nil accepts ErrNotOwner
// or ErrLeaseLost.
type ownerStep struct {
	what string
	call func(context.Context) error
	want error
}

// checkWrongOwner proves, on a lease table, that Release and Refresh by an
// owner who does not hold the lock fail with ErrNotOwner and leave the row
// as it was, that a stale token is refused too, and that the rightful
// owner's Handle still works.
func checkWrongOwner(ctx context.Context, env *Env, tg target) (string, error) {
	tl, err := tg.tableLocker(ctx, env)
	if err != nil {
		return "", err
	}
	name, owner := env.Name("owner"), env.Owner("A")
	opts := dialects.Options{AtMost: time.Minute, Owner: owner}
	lease, err := env.Acquire(ctx, tl, name, opts)
	if err != nil {
		return "", fmt.Errorf("acquire: %w", err)
	}
	before, err := inspect(ctx, tl, name)
	if err != nil {
		return "", err
	}

	intruder, err := tl.Handle(name, env.Owner("intruder"), 0, dialects.Options{AtMost: time.Minute})
	if err != nil {
		return "", fmt.Errorf("handle for another owner: %w", err)
	}
	steps := []ownerStep{
		{"release by another owner", intruder.Release, dialects.ErrNotOwner},
		{"refresh by another owner", intruder.Refresh, dialects.ErrNotOwner},
	}
	if tok, ok := lease.Token(); ok {
		stale, err := tl.Handle(name, owner, tok+1000, opts)
		if err != nil {
			return "", fmt.Errorf("handle with a stale token: %w", err)
		}
		// A stale token of the right owner is an older lease: either
		// refusal (not the owner, or lost) is right.
		steps = append(steps,
			ownerStep{"release with another token", stale.Release, nil},
			ownerStep{"refresh with another token", stale.Refresh, nil})
	}
	for _, s := range steps {
		err := s.call(ctx)
		if s.want != nil {
			if e := expectErr(s.what, err, s.want); e != nil {
				return "", e
			}
		} else if err == nil || !(errors.Is(err, dialects.ErrNotOwner) || errors.Is(err, dialects.ErrLeaseLost)) {
			return "", fmt.Errorf("%s: got %v; want an error matching %q or %q", s.what, err, dialects.ErrNotOwner, dialects.ErrLeaseLost)
		}
		after, err := inspect(ctx, tl, name)
		if err != nil {
			return "", err
		}
		if diff := sameRow(before, after); diff != "" {
			return "", fmt.Errorf("the refused %s changed the row: %s", s.what, diff)
		}
		if after.Expired() {
			return "", fmt.Errorf("the lock is free after the refused %s", s.what)
		}
	}
	if err := refusedAcquire(ctx, tl, name, env.Owner("B"), "after the refused calls"); err != nil {
		return "", err
	}

	rightful, err := tl.Handle(name, owner, 0, opts)
	if err != nil {
		return "", fmt.Errorf("handle for the owner: %w", err)
	}
	if err := rightful.Refresh(ctx); err != nil {
		return "", fmt.Errorf("refresh through a handle of the rightful owner: %w", err)
	}
	if err := lease.Release(ctx); err != nil {
		return "", fmt.Errorf("release by the owner after the refused calls: %w", err)
	}
	return fmt.Sprintf("%d calls by the wrong owner or token refused, row unchanged; the owner's handle refreshed", len(steps)), nil
}

// checkPoolTrap reproduces the pooled-connection trap with the dialect's
// SessionOps: a lock taken on connection A cannot be freed from connection
// B, A still holds it, and a locker still finds it held.
func checkPoolTrap(ctx context.Context, env *Env, tg target) (string, error) {
	l, err := tg.locker(ctx, env)
	if err != nil {
		return "", err
	}
	sl, isSQL := l.(sqlkit.SQLSessionLocker)
	if !isSQL {
		return "", Skipf("the session locker is a %T, not a database/sql one: no pooled connections to trap", l)
	}
	pool, ops := sl.SessionPool()
	name := env.Name("pool-trap")
	connA, err := pool.Conn(ctx)
	if err != nil {
		return "", fmt.Errorf("connection A: %w", err)
	}
	env.Defer(func(context.Context) error { discardConn(connA); return nil })
	connB, err := pool.Conn(ctx)
	if err != nil {
		return "", fmt.Errorf("connection B: %w", err)
	}
	env.Defer(func(context.Context) error { discardConn(connB); return nil })

	ok, err := ops.TryLock(ctx, connA, name)
	if err != nil || !ok {
		return "", fmt.Errorf("try-lock on connection A of a free lock: got %v, %v; want true", ok, err)
	}
	freed, err := ops.Unlock(ctx, connB, name)
	if err != nil {
		return "", fmt.Errorf("unlock on connection B: %w", err)
	}
	if freed {
		return "", remedied(errors.New("connection B unlocked a lock that connection A holds"),
			"session locks must be owned by the session that took them; use the table strategy on this database")
	}
	holds, err := ops.Holds(ctx, connA, name)
	if err != nil || !holds {
		return "", fmt.Errorf("after B's unlock, A holds the lock: got %v, %v; want true", holds, err)
	}
	if err := refusedAcquire(ctx, l, name, env.Owner("B"), "after B's unlock"); err != nil {
		return "", err
	}
	if ok, err := ops.Unlock(ctx, connA, name); err != nil || !ok {
		return "", fmt.Errorf("unlock on connection A: got %v, %v; want true", ok, err)
	}
	lease, err := env.Acquire(ctx, l, name, dialects.Options{Owner: env.Owner("C")})
	if err != nil {
		return "", fmt.Errorf("acquire after A's unlock: %w", err)
	}
	if err := lease.Release(ctx); err != nil {
		return "", fmt.Errorf("release: %w", err)
	}
	return "unlock from another connection freed nothing; the holding connection released it", nil
}

// discardConn closes conn's physical connection rather than pooling it, so
// no lock the check might have left on it can leak.
func discardConn(conn *sql.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = conn.Close()
}
