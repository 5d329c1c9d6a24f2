package exporter

import (
	"strings"

	"github.com/schedlock/schedlock/dialects"
)

// holderLabels are the owner, host and application labels of the lock's
// holder, and whether it has one: a held, paused, stale or expired lock
// with an owner or a holder session.
//
//   - owner: the lease's owner (schedlock's "host:pid:random", ShedLock's
//     host name, …), else "session ID" for a session lock;
//   - host: the owner's host (the part before the first ':'), else the
//     session's client address;
//   - application: the application name the holder session announced
//     (session locks), else "".
func holderLabels(e dialects.LockEntry) (owner, host, application string, ok bool) {
	switch e.State {
	case dialects.StateHeld, dialects.StatePaused, dialects.StateStale, dialects.StateExpired:
	default:
		return "", "", "", false
	}
	owner = e.Owner
	if e.Holder != nil {
		if owner == "" && e.Holder.SessionID != "" {
			owner = "session " + e.Holder.SessionID
		}
		host, application = e.Holder.Client, e.Holder.Application
	}
	if host == "" && e.Owner != "" {
		host, _, _ = strings.Cut(e.Owner, ":")
	}
	if owner == "" && host == "" && application == "" {
		return "", "", "", false
	}
	return owner, host, application, true
}
