package cmd

import (
	"context"
	"errors"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
	"github.com/schedlock/schedlock/internal/elide"
)

// holderLookupTimeout bounds the holder lookup after a refusal.
const holderLookupTimeout = 2 * time.Second

// withHolder names the holder in a refusal that does not (a session lock
// refusal is one round trip; the holder is looked up here, on request):
// the session as `locks ls` shows it, found by the backend's LockAdmin
// (lease refusals name their owner themselves).
func (o *RunOptions) withHolder(ctx context.Context, locker dialects.Locker, name string, err error) error {
	var held *dialects.HeldError
	if !errors.As(err, &held) || held.Holder != "" || ctx.Err() != nil {
		return err
	}
	lctx, cancel := context.WithTimeout(ctx, holderLookupTimeout)
	defer cancel()
	if o.sessionHolder != nil {
		if h := o.sessionHolder(lctx); h != "" {
			held.Holder = h
		}
	}
	return err
}

// sessionHolderOf returns a lookup of the session holding the session lock
// stored as stored on db, described as `locks ls` describes it: "session
// 9592: app@10.0.0.7, schedlock run nightly, since 2024-05-01T10:00:00Z";
// "" when nobody holds it or the lookup fails. nil unless locker takes
// session locks on a SQL database.
func sessionHolderOf(db dialects.Backend, locker dialects.Locker, stored string) func(context.Context) string {
	sqlDB, ok := sqlkit.Of(db)
	if !ok || !sqlDB.HasSessionLocks() || locker.Strategy() != dialects.StrategySession {
		return nil
	}
	return func(ctx context.Context) string {
		e, found, err := sqlDB.LockAdmin().SessionLock(ctx, stored)
		if err != nil || !found || e.Holder == nil || e.Holder.SessionID == "" {
			return ""
		}
		return describeSession(e.Holder)
	}
}

// heldText is the refusal held says, with room for a session's whole
// description (HeldError cuts a holder at elide.MaxRunes, an owner's
// length).
func heldText(held *dialects.HeldError) string {
	if _, paused := held.Paused(); paused || held.Holder == "" || !held.Until.IsZero() {
		return held.Error()
	}
	return "lock " + elide.Quote(held.Name) + " is held by " + elide.String(held.Holder, 4*elide.MaxRunes)
}
