package cmd

import (
	"context"
	"fmt"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// `schedlock locks ls --key KEY`: the session lock known by the key the
// server stores, as unlock --key takes it, found without listing the
// server's locks (IS_USED_LOCK on MySQL).

// keyedLister lists the one session lock whose key is key.
type keyedLister struct {
	dialects.LockLister
	finder sqlkit.SessionKeyFinder
	key    string
}

// newKeyedLister is the lister of locks ls --key on db.
func newKeyedLister(db dialects.Backend, key string) (dialects.LockLister, error) {
	lister, err := lockLister(db)
	if err != nil {
		return nil, err
	}
	breaker, ok := db.(dialects.LockBreaker)
	var finder sqlkit.SessionKeyFinder
	if ok && dialectHasSessions(breaker) {
		finder, ok = breaker.LockAdmin().(sqlkit.SessionKeyFinder)
	}
	if !ok || finder == nil {
		return nil, fmt.Errorf("%w: this database has no session locks to find by key", dialects.ErrUnsupported)
	}
	return &keyedLister{LockLister: lister, finder: finder, key: key}, nil
}

// ListLocks returns the session lock with the key, held or awaited, when
// opts keeps it.
func (l *keyedLister) ListLocks(ctx context.Context, opts dialects.ListOptions) (*dialects.Listing, error) {
	out := &dialects.Listing{Locks: []dialects.LockEntry{}}
	e, found, err := l.finder.SessionLockByKey(ctx, l.key)
	if err != nil {
		return nil, err
	}
	if found && opts.Keeps(e) {
		out.Locks = append(out.Locks, e)
	}
	return out, nil
}

// validateKey checks locks ls --key before anything is read.
func (o *LocksOptions) validateKey() error {
	switch {
	case o.Key == "":
		return nil
	case o.Strategy == string(dialects.StrategyTable):
		return usageErrorf(o.Command, "--key names a session lock: give no --strategy table with it")
	case o.Table != "" || o.Preset != "":
		return usageErrorf(o.Command, "--key names a session lock; --table and --preset apply to table locks")
	case o.SessionNames.given():
		return usageErrorf(o.Command, "--key names the lock by its key as the server stores it: --session-names and --session-key apply to --name")
	}
	return nil
}
