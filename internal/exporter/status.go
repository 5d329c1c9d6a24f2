package exporter

import (
	"net/http"
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// MinPageRefresh is the shortest interval at which the status page
// reloads itself; it reloads every Options.Cache above it.
const MinPageRefresh = 5 * time.Second

// statusView is what renderStatus renders.
type statusView struct {
	Refresh int // seconds
	Taken   string
	Targets []targetView
}

type targetView struct {
	Name     string
	Up       bool
	Reason   string
	Error    string
	Duration string
	Notes    []string
	Locks    []lockView
}

type lockView struct {
	Name, Namespace, Source, State, Holder, LeaseEnd string
	StaleReason                                      string
	Waiters                                          int
	// Runs are the newest recorded runs, newest first (PageRuns at most).
	Runs []runView
}

type runView struct {
	Text     string
	ExitCode int
	Warn     bool // the run used more than RunShareWarning of its at-most
}

// statusPage serves the read-only status page: every lock of every
// target with its state, holder, lease end and last run, reloading
// itself. It has no form and no action: nothing on it changes a lock.
func (e *Exporter) statusPage() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		snap := e.Snapshot(r.Context())
		refresh := max(e.opts.Cache, MinPageRefresh)
		v := statusView{Refresh: int(refresh.Round(time.Second) / time.Second), Taken: snap.Taken.UTC().Format(time.RFC3339)}
		runs := e.recentRuns(r.Context(), snap)
		for i, t := range snap.Targets {
			v.Targets = append(v.Targets, targetPage(i, t, runs))
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write([]byte(renderStatus(v)))
	})
}

func targetPage(i int, t TargetSnapshot, recent map[runKey][]dialects.Run) targetView {
	v := targetView{Name: t.Name, Up: t.Up, Reason: t.Reason, Duration: t.Duration.Round(time.Millisecond).String(), Notes: t.Notes}
	if t.Err != nil {
		v.Error = oneLine(t.Err.Error())
	}
	for _, l := range groupLocks(t.Locks) {
		state := string(l.State)
		if state == "" {
			state = string(dialects.StateWaiting)
		}
		lv := lockView{Name: l.Name, Namespace: l.Namespace, Source: l.Source, State: state, Waiters: l.Waiters,
			Holder: holderText(l.LockEntry), LeaseEnd: leaseEndText(l.LockEntry)}
		lv.StaleReason = l.StaleReason
		runs, ok := recent[runKey{i, l.Name, l.Namespace, l.Source}]
		if !ok && l.LastRun != nil {
			runs = []dialects.Run{*l.LastRun}
		}
		for _, r := range runs {
			lv.Runs = append(lv.Runs, runView{Text: runText(r), ExitCode: r.ExitCode, Warn: r.Share() > dialects.RunShareWarning})
		}
		v.Locks = append(v.Locks, lv)
	}
	return v
}

// holderText is who holds the lock: its owner, or its session ("session
// 4242: app@10.0.0.7, nightly").
func holderText(e dialects.LockEntry) string {
	if h := e.Holder; h != nil && h.SessionID != "" {
		s := "session " + h.SessionID
		var who []string
		switch {
		case h.User != "" && h.Client != "":
			who = append(who, h.User+"@"+h.Client)
		case h.User != "":
			who = append(who, h.User)
		case h.Client != "":
			who = append(who, h.Client)
		}
		if h.Application != "" {
			who = append(who, h.Application)
		}
		if len(who) > 0 {
			s += ": " + strings.Join(who, ", ")
		}
		return s
	}
	if e.Owner == "" {
		return "-"
	}
	return e.Owner
}

// leaseEndText is the lease end in UTC with how far it is from the
// database's now: "2024-05-01 10:30:00 (in 4m30s)".
func leaseEndText(e dialects.LockEntry) string {
	switch {
	case e.Until.Equal(dialects.HeldForGood):
		return "never (no expiry)"
	case e.Until.IsZero():
		return "-"
	}
	s := e.Until.UTC().Format(time.DateTime)
	if e.DBNow.IsZero() {
		return s
	}
	switch d := e.Until.Sub(e.DBNow).Round(time.Second); {
	case d > 0:
		return s + " (in " + d.String() + ")"
	case d < 0:
		return s + " (" + (-d).String() + " ago)"
	}
	return s + " (now)"
}
