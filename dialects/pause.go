package dialects

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/schedlock/schedlock/internal/elide"
)

// A pause stops a job on every node without a deploy: the lock's lease
// row is taken by a marker owner, PauseOwnerPrefix followed by who paused
// it, with a lease that ends when the pause does. Every runner's acquire
// then finds the lock held (it is: the statement is the ordinary acquire,
// so the lease arithmetic stays on the database clock and every preset and
// every SQL dialect has it) and reads the holder, which names the pause.
// ShedLock processes sharing a shedlock table skip the job too, for the
// same reason. When the pause ends the lock is free again; Resume ends it
// early with an owner-checked release.
//
// A pause lives in a lease row, so it needs a lease table: session locks
// end with their connection and cannot outlast the command that would set
// them. Backends offer it through the optional Pauser interface.

// PauseOwnerPrefix starts the owner of a paused lock; the rest names who
// paused it. Owners that start with it are reserved for pauses.
const PauseOwnerPrefix = "paused:"

// MaxPause is the longest pause: 366 days (8784h), a year with a leap
// day. A pause is a lease, so its end is stored in the table's lease-end
// column; this bound keeps it well inside every column type that holds
// one (MySQL's TIMESTAMP, ShedLock's column there, ends in January 2038)
// and catches a mistyped length (--for 1000000h). A job that must stop for
// longer is not paused but unscheduled; a pause that should go on is
// paused again, which replaces it.
const MaxPause = 366 * 24 * time.Hour

// ErrPaused: the lock is paused; the *HeldError (which also matches
// ErrHeld, so code that skips a held lock skips a paused one) names who
// paused it and until when.
var ErrPaused = errors.New("lock paused")

// ErrNotPaused: Resume found the lock not paused; nothing changed.
var ErrNotPaused = errors.New("lock not paused")

// PauseOwner is the owner a pause by by records.
func PauseOwner(by string) string { return PauseOwnerPrefix + by }

// PausedBy reports whether owner is a pause's, and who paused.
func PausedBy(owner string) (by string, ok bool) {
	if !strings.HasPrefix(owner, PauseOwnerPrefix) {
		return "", false
	}
	return strings.TrimPrefix(owner, PauseOwnerPrefix), true
}

// Paused reports whether the lock is paused and by whom: its holder is a
// pause marker.
func (e *HeldError) Paused() (by string, ok bool) { return PausedBy(e.Holder) }

// PauseRequest is what Pauser.Pause sets.
type PauseRequest struct {
	// By names who pauses (a person, user@host); it is recorded in the
	// owner column as PauseOwner(By), so it follows CheckOwner's rules.
	By string
	// For is how long the pause lasts, from the database's now; > 0 and
	// at most MaxPause.
	For time.Duration
	// Wait is how long to wait for a running job's lease to end before the
	// pause is refused with a *HeldError (default 0: one try).
	Wait time.Duration
}

// Pauser is implemented by backends whose lease table can hold a pause
// (`schedlock pause`, `schedlock resume`). Lease stores without a table
// (Redis, etcd, ZooKeeper) implement it where their lease can carry the
// marker owner, for example with PauseLock and ResumeLock over their own
// LeaseLocker.
type Pauser interface {
	// Pause pauses the lock called name in table t for req.For. A lock held
	// by a running job gives a *HeldError (after req.Wait); a lock paused
	// already gets the new pause in its place. It does not check that the
	// lock exists: that is the caller's choice.
	Pause(ctx context.Context, t Table, name string, req PauseRequest) error
	// Resume ends the pause of name in table t now. A lock that is not
	// paused gives an error matching ErrNotPaused and changes nothing.
	Resume(ctx context.Context, t Table, name string) error
}

// PauseLock pauses name on tl with the locker's own statements: a pause
// of a lock paused already is moved to the new pauser and length (a
// refresh when the pauser is the same, else a guarded release and a new
// acquire); any other lock is acquired by PauseOwner(req.By) for req.For,
// waiting up to req.Wait for a running job's lease to end. A req.For of 0
// or below, or above MaxPause, is refused with ErrInvalid before anything
// is read.
func PauseLock(ctx context.Context, tl LeaseLocker, name string, req PauseRequest) error {
	if req.For <= 0 {
		return invalidf("a pause must last a positive time, got %s", req.For)
	}
	if req.For > MaxPause {
		return invalidf("a pause may last at most 366 days (8784h), got %s", req.For)
	}
	owner := PauseOwner(req.By)
	if err := CheckOwner(owner); err != nil {
		return fmt.Errorf("who pauses: %w", err)
	}
	opts := Options{AtMost: req.For, Wait: req.Wait, Owner: owner}
	row, found, err := tl.Inspect(ctx, name)
	if err != nil {
		return err
	}
	if _, paused := PausedBy(row.Owner); found && paused && !row.Expired() {
		old, err := tl.Handle(name, row.Owner, row.Token, opts)
		if err != nil {
			return err
		}
		if row.Owner == owner {
			return old.Refresh(ctx)
		}
		if err := old.Release(ctx); err != nil {
			return fmt.Errorf("end the pause by %s: %w", elide.String(strings.TrimPrefix(row.Owner, PauseOwnerPrefix), elide.MaxRunes), err)
		}
		opts.Wait = 0
	}
	_, err = tl.Acquire(ctx, name, opts)
	return err
}

// ResumeLock ends the pause of name on tl now, under the owner and token
// just read, so a pause set again in between is left alone. A lock that
// is not paused (no row, another owner, a pause that has run out) gives an
// error matching ErrNotPaused.
func ResumeLock(ctx context.Context, tl LeaseLocker, name string) error {
	row, found, err := tl.Inspect(ctx, name)
	if err != nil {
		return err
	}
	if _, paused := PausedBy(row.Owner); !found || !paused || row.Expired() {
		return fmt.Errorf("%w: lock %s is not paused", ErrNotPaused, elide.Quote(name))
	}
	// The handle only releases; its at-most is long enough that no backend
	// judges it run out on the host before the release is sent.
	h, err := tl.Handle(name, row.Owner, row.Token, Options{AtMost: time.Minute})
	if err != nil {
		return err
	}
	return h.Release(ctx)
}

// LeasePauser implements Pauser for a store whose pause is a lease of the
// pause owner on the lock's own item (PauseLock, ResumeLock), so every
// node that takes the lock — a peer on the same layout too — finds it
// taken until the pause ends. A backend embeds it, set in its Open:
// Dialect names it in errors, Locker gives the lease locker of a table.
type LeasePauser struct {
	Dialect string
	Locker  func(Table) (LeaseLocker, error)
}

// Pause implements Pauser: PauseLock on t's lease locker.
func (p LeasePauser) Pause(ctx context.Context, t Table, name string, req PauseRequest) error {
	tl, err := p.Locker(t)
	if err != nil {
		return err
	}
	return Wrap(p.Dialect, "pause", PauseLock(ctx, tl, name, req))
}

// Resume implements Pauser: ResumeLock, under the owner check.
func (p LeasePauser) Resume(ctx context.Context, t Table, name string) error {
	tl, err := p.Locker(t)
	if err != nil {
		return err
	}
	return Wrap(p.Dialect, "resume", ResumeLock(ctx, tl, name))
}
