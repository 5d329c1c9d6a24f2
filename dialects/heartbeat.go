package dialects

import (
	"strconv"
	"strings"
	"time"
)

// A holder that refreshes its lease declares how in its owner, so that a
// reader of the lease row can tell a holder that stopped refreshing (the
// zombie of a kill -9 or a hung host) long before its lease ends, on every
// preset and store, without a column of its own: ShedLock's and
// sys_sched_lock's columns stay as they are, and the owner is text schedlock
// writes anyway. WithLock adds the declaration to the owner it generates:
//
//	web-3:4711:9f1c2a7b;hb=10m/30m          refreshed every 10m, lease 30m
//	web-3:4711:9f1c2a7b;hb=1s/3s/2s         … kept at least 2s after release
//
// Every refresh sets the lease end to the database's now plus the lease, so
// the row's lease end less the lease is the time of the last refresh.

// HeartbeatMark separates an owner from its heartbeat declaration.
const HeartbeatMark = ";hb="

// StaleRefreshes is how many refresh intervals may pass without a refresh
// before a lease is stale.
const StaleRefreshes = 2

// Heartbeat is how a holder keeps its lease alive.
type Heartbeat struct {
	// Every is the refresh interval.
	Every time.Duration
	// Lease is what a refresh extends the lease to, from the database's
	// now (Options.AtMost).
	Lease time.Duration
	// AtLeast is the holder's Options.AtLeast: after an early release the
	// lease runs on to locked-at + AtLeast, with no refresh, by design.
	AtLeast time.Duration
}

// WithHeartbeat returns owner with hb declared after it (see HeartbeatMark).
// An owner that declares one already is returned unchanged, and so is one
// that would grow past MaxOwnerBytes.
func WithHeartbeat(owner string, hb Heartbeat) string {
	if hb.Every <= 0 || hb.Lease <= 0 || strings.Contains(owner, HeartbeatMark) {
		return owner
	}
	s := owner + HeartbeatMark + shortDuration(hb.Every) + "/" + shortDuration(hb.Lease)
	if hb.AtLeast > 0 {
		s += "/" + shortDuration(hb.AtLeast)
	}
	if len(s) > MaxOwnerBytes {
		return owner
	}
	return s
}

// ParseHeartbeat reads the heartbeat an owner declares; ok is false when it
// declares none (an owner given by hand, ShedLock's host name, a pause).
func ParseHeartbeat(owner string) (hb Heartbeat, ok bool) {
	i := strings.LastIndex(owner, HeartbeatMark)
	if i < 0 {
		return Heartbeat{}, false
	}
	parts := strings.Split(owner[i+len(HeartbeatMark):], "/")
	if len(parts) < 2 || len(parts) > 3 {
		return Heartbeat{}, false
	}
	var ds [3]time.Duration
	for k, p := range parts {
		d, err := time.ParseDuration(p)
		if err != nil || d < 0 {
			return Heartbeat{}, false
		}
		ds[k] = d
	}
	hb = Heartbeat{Every: ds[0], Lease: ds[1], AtLeast: ds[2]}
	if hb.Every <= 0 || hb.Lease <= 0 {
		return Heartbeat{}, false
	}
	return hb, true
}

// shortDuration writes d in its largest whole unit (1h, 90s, 1500ms), which
// time.ParseDuration reads back exactly.
func shortDuration(d time.Duration) string {
	for _, u := range []struct {
		d time.Duration
		s string
	}{{time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}, {time.Millisecond, "ms"}} {
		if d%u.d == 0 {
			return strconv.FormatInt(int64(d/u.d), 10) + u.s
		}
	}
	return d.String()
}

// wholeSecondSlack allows for lease-end columns that keep whole seconds
// (the statements round the lease end up to the next second).
const wholeSecondSlack = time.Second

// LastRefresh is when r's holder last set its lease end, by its heartbeat
// declaration (lease end less the lease), with the interval it promised;
// ok is false when the owner declares no heartbeat or the row's times are
// a host's estimate (HostTimes) or unknown.
func LastRefresh(r Row) (at time.Time, every time.Duration, ok bool) {
	hb, ok := ParseHeartbeat(r.Owner)
	if !ok || r.HostTimes || r.Until.IsZero() || r.DBNow.IsZero() || r.Until.Equal(HeldForGood) {
		return time.Time{}, 0, false
	}
	return r.Until.Add(-hb.Lease), hb.Every, true
}

// keptByAtLeast reports whether r's lease runs on only because of its
// holder's at-least after an early release: its end is no later than
// locked-at + at-least, which no refresh leaves (a refresh sets it to
// now + lease, and lease >= at-least).
func keptByAtLeast(r Row) bool {
	hb, ok := ParseHeartbeat(r.Owner)
	if !ok || hb.AtLeast <= 0 || r.LockedAt.IsZero() {
		return false
	}
	return !r.Until.After(r.LockedAt.Add(hb.AtLeast + wholeSecondSlack))
}

// StaleReason says why the live lease r is stale, or "" when it is not
// (or is not live): its holder declared a heartbeat and has not refreshed
// for StaleRefreshes intervals, or its owner names a process of this host
// that is gone (see OwnerProcessGone). A lease that runs on after an
// early release, by the holder's declared at-least, is not stale. Where
// the owner declares no heartbeat and is not a process of this host
// (ShedLock's nodes, another tool's, an owner given by hand) a stopped
// holder cannot be told from a live one: the lease stays held until it
// ends, then expired.
func StaleReason(r Row) string {
	if !r.Until.After(r.DBNow) || keptByAtLeast(r) {
		return ""
	}
	if at, every, ok := LastRefresh(r); ok {
		if late := r.DBNow.Sub(at); late > StaleRefreshes*every {
			return "no refresh for " + FormatAge(late) + ", due every " + shortDuration(every)
		}
	}
	if pid, gone := OwnerProcessGone(r.Owner); gone {
		return "owner process " + strconv.Itoa(pid) + " is gone on this host"
	}
	return ""
}

// FormatAge writes d rounded to a readable unit: 950ms, 12s, 3m4s, 2h5m.
func FormatAge(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	}
	return d.Round(time.Minute).String()
}
