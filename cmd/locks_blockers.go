package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// maxTableRead bounds the read of the lock tables by `locks ls` while
// sessions hold locks on them: a table locked whole (a migration's ACCESS
// EXCLUSIVE) would hold the listing until --timeout, and nothing at all
// would be listed.
const maxTableRead = 3 * time.Second

// listNamingBlockers lists as lister.ListLocks does, and adds a warning
// note naming each session that holds a lock on a lock table or one of
// its rows, or blocks one of schedlock's sessions, with the statement that
// ends it. While such sessions exist the tables get maxTableRead (or half
// of what is left of ctx, if less); when their read does not end within
// it, the server's own lock views are listed alone, with a note saying so.
func listNamingBlockers(ctx context.Context, db dialects.Backend, lister dialects.LockLister, opts dialects.ListOptions) (*dialects.Listing, error) {
	blockers, lookupErr := findBlockers(ctx, db, opts.Tables, blockerTimeout)
	if len(blockers) == 0 {
		listing, err := lister.ListLocks(ctx, opts)
		if err != nil && lookupErr != nil && ctx.Err() != nil {
			err = fmt.Errorf("%w (%s)", err, lookupFailed(lookupErr))
		}
		return listing, err
	}
	bound := maxTableRead
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline)/2 < bound {
		bound = time.Until(deadline) / 2
	}
	tctx, cancel := context.WithTimeout(ctx, bound)
	listing, err := lister.ListLocks(tctx, opts)
	blocked := err != nil && tctx.Err() != nil && ctx.Err() == nil
	cancel()
	if blocked && opts.Strategy != dialects.StrategySession {
		sessions := opts
		sessions.Strategy = dialects.StrategySession
		listing, err = lister.ListLocks(ctx, sessions)
		if err == nil {
			listing.Notes = append(listing.Notes, warningNote+fmt.Sprintf("the lock tables could not be read within %s: another session keeps them locked (below); only the server's session locks are listed", bound.Round(time.Millisecond)))
		}
	}
	if err != nil {
		return listing, err
	}
	for _, b := range blockers {
		listing.Notes = append(listing.Notes, warningNote+blockerText(b))
	}
	return listing, nil
}
