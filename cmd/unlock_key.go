package cmd

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
	"github.com/schedlock/schedlock/internal/elide"
)

// `schedlock unlock --key KEY --kill-session`: free a session lock known
// only by the raw key locks ls shows (a migration tool's advisory lock or
// GET_LOCK name), by terminating the session that holds it.

// keyArgs checks the arguments of unlock --key: no lock name.
func keyArgs(c *cobra.Command, args []string) error {
	if len(args) != 0 {
		return &UsageError{Err: fmt.Errorf("--key names the lock by its key: give no lock name with it (got %q)", args[0]), Command: c.CommandPath()}
	}
	return nil
}

// validateKey checks the flags of unlock --key before anything is read.
func (o *UnlockOptions) validateKey() error {
	switch {
	case !o.KillSession:
		return usageErrorf(o.Command, "--key names a session lock, which only ending its session frees: add --kill-session")
	case o.SessionNames.given():
		return usageErrorf(o.Command, "--key names the lock by its key as the server stores it: --session-names and --session-key apply to NAME")
	case o.Force || o.Owner != "" || o.Table != "" || o.Preset != "":
		return usageErrorf(o.Command, "--key frees a session lock; --force, --owner, --table and --preset apply to table locks")
	case o.Global != nil && o.Global.Namespace != "":
		return usageErrorf(o.Command, "--key names the lock as the server stores it, namespace included: give no --namespace with it")
	}
	return nil
}

// unlockKeyRun is unlock --key: find the session holding the lock with the
// key, confirm, terminate it while it still holds the lock, and report.
func unlockKeyRun(ctx context.Context, o *UnlockOptions) error {
	if err := o.validateKey(); err != nil {
		return err
	}
	target, err := resolveAdminDSN(o.Factory, o.Global, o.Command)
	if err != nil {
		return err
	}
	backend, err := connectAdmin(ctx, target, o.Command)
	if err != nil {
		return err
	}
	defer backend.Close()
	db, err := lockBreaker(backend)
	if err != nil {
		return adminError(err, target, o.Command)
	}
	finder, ok := db.LockAdmin().(sqlkit.SessionKeyFinder)
	if !ok || !dialectHasSessions(db) {
		return adminError(fmt.Errorf("%w: this database has no session locks to find by key", dialects.ErrUnsupported), target, o.Command)
	}
	e, found, err := finder.SessionLockByKey(ctx, o.Key)
	switch {
	case errors.Is(err, dialects.ErrInvalid):
		return &UsageError{Err: err, Command: o.Command}
	case err != nil:
		return adminError(err, target, o.Command)
	case !found:
		return negativef("no session holds the lock with key %s; nothing to unlock", o.Key)
	case e.Holder == nil || e.Holder.SessionID == "":
		return fmt.Errorf("lock key %s is held by %s: cannot terminate it; run detect to see the grant that allows listing locks", o.Key, describeSession(e.Holder))
	}
	plan := &unlockPlan{action: actionKillSession, lock: e, byKey: true}
	return o.carryOut(ctx, db, target, plan)
}

// dialectHasSessions reports whether db has session locks: a SQL database
// whose dialect has them (not SQLite, CockroachDB, …); any other backend
// whose LockAdmin finds them by key.
func dialectHasSessions(db dialects.LockBreaker) bool {
	if sql, ok := sqlkit.Of(db.(dialects.Backend)); ok {
		return sql.HasSessionLocks()
	}
	return true
}

// lookupSession reads the session holding the plan's session lock now: by
// its key for unlock --key, else by its name.
func lookupSession(ctx context.Context, admin dialects.LockAdmin, p *unlockPlan) (dialects.LockEntry, bool, error) {
	if p.byKey {
		finder, ok := admin.(sqlkit.SessionKeyFinder)
		if !ok {
			return dialects.LockEntry{}, false, fmt.Errorf("%w: this database cannot find session locks by key", dialects.ErrUnsupported)
		}
		return finder.SessionLockByKey(ctx, p.lock.Key)
	}
	return admin.SessionLock(ctx, p.lock.Name)
}

// lockRef names the plan's lock in a message: "key 3888200822" for unlock
// --key, else the quoted name.
func lockRef(p *unlockPlan) string {
	if p.byKey {
		return "key " + p.lock.Key
	}
	return strconv.Quote(elide.String(p.lock.Name, elide.MaxArgRunes))
}

// keyHint suggests --key when a lock name that is not held looks like a
// numeric advisory key (unlock hashes a NAME into a key of its own).
func keyHint(name string) string {
	if _, err := strconv.ParseInt(name, 10, 64); err != nil {
		return ""
	}
	return "; if " + name + " is a key that locks ls shows, free it with --key " + name + " --kill-session"
}
