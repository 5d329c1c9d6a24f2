// Package hooks tells the world what `schedlock run` did: at each event of
// a run (start, success, failure, skip, lost) it requests a URL or runs a
// command.
//
// A URL hook is an HTTP POST with a small JSON body (Payload); the
// response must be 2xx. Connection errors, timeouts and the answers 408,
// 429 and 5xx are retried with exponential back-off (MaxTries in all,
// honouring Retry-After); any other answer is final. A Ping hook is a base
// ping URL in the conventions of healthchecks.io, which the event extends:
// BASE/start, BASE (success), BASE/<exit code> (failure), BASE/fail (lost),
// BASE/log (skip). A command hook runs once through the shell, with the
// event in its environment (EnvEvent, EnvLockName, EnvExitCode, EnvOwner).
//
// Whatever a hook does, it never changes the run: Fire returns no error,
// gives each event at most Timeout (every hook of one event runs at once,
// each in that time, retries included) and reports a failed hook as one
// line through Set.Warn. URLs are shown redacted (see Redact): a ping URL
// is a secret, whoever knows it can report for the job.
package hooks

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Event is a moment of a run that hooks can report.
type Event string

// The events of a run, in the order a run meets them.
const (
	// Start: the lock was acquired; COMMAND is about to start.
	Start Event = "start"
	// Success: COMMAND exited 0 and the lock was held to the end.
	Success Event = "success"
	// Failure: the run ended with a non-zero exit code, not skipped and
	// not lost (COMMAND failed, or the run could not connect or acquire).
	Failure Event = "failure"
	// Skip: the lock was held elsewhere; COMMAND did not run here.
	Skip Event = "skip"
	// Lost: the lock was lost while COMMAND ran (exit 113).
	Lost Event = "lost"
)

// Events are all events, in the order of the flags that name them.
var Events = []Event{Start, Success, Failure, Skip, Lost}

// DefaultTimeout bounds each event's hooks, retries included.
const DefaultTimeout = 5 * time.Second

// MaxTries is how many times a URL hook is requested at most (the first
// request and three retries).
const MaxTries = 4

// Kind is what a hook does.
type Kind int

const (
	// KindURL posts to the URL as given.
	KindURL Kind = iota
	// KindPing posts to a healthchecks.io-style ping URL extended by the
	// event (see PingURL).
	KindPing
	// KindCommand runs a shell command.
	KindCommand
)

// Hook is one hook: a URL to post to, a base ping URL, or a command.
type Hook struct {
	Kind Kind
	// URL is the parsed URL (KindURL, KindPing).
	URL *url.URL
	// Command is the shell command (KindCommand).
	Command string
	// Flag is the flag the hook came from, for messages (e.g. "--on-start").
	Flag string
}

// Parse reads one hook value: an http:// or https:// URL, else a shell
// command. ping makes a URL a base ping URL; a ping must be a URL.
func Parse(value string, ping bool) (Hook, error) {
	v := strings.TrimSpace(value)
	if v == "" {
		return Hook{}, errors.New("empty: give a URL (https://…) or a command")
	}
	lower := strings.ToLower(v)
	if !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://") {
		if ping || strings.Contains(strings.SplitN(v, " ", 2)[0], "://") {
			return Hook{}, fmt.Errorf("%s is not an http:// or https:// URL", Redact(v))
		}
		return Hook{Kind: KindCommand, Command: v}, nil
	}
	u, err := url.Parse(v)
	if err != nil {
		return Hook{}, fmt.Errorf("%s is not a valid URL", Redact(v))
	}
	if u.Host == "" {
		return Hook{}, fmt.Errorf("%s has no host", Redact(v))
	}
	u.Fragment, u.RawFragment = "", ""
	h := Hook{Kind: KindURL, URL: u}
	if ping {
		h.Kind = KindPing
	}
	return h, nil
}

// PingURL is the URL a ping hook requests for ev, after healthchecks.io:
// BASE/start, BASE on success, BASE/<exit code> on failure, BASE/fail when
// the lock was lost, BASE/log (logged, no change of state) when skipped.
func PingURL(base *url.URL, ev Event, exitCode int) *url.URL {
	suffix := ""
	switch ev {
	case Start:
		suffix = "start"
	case Failure:
		suffix = fmt.Sprint(exitCode)
	case Lost:
		suffix = "fail"
	case Skip:
		suffix = "log"
	}
	u := *base
	if suffix != "" {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/" + suffix
		if u.RawPath != "" {
			u.RawPath = strings.TrimSuffix(u.RawPath, "/") + "/" + suffix
		}
	}
	return &u
}

// Info is what a hook is told of the run.
type Info struct {
	Event Event
	// Lock is the lock name as stored (NS::NAME in a namespace).
	Lock  string
	Owner string
	Host  string
	// ExitCode is the run's exit code (Success, Failure, Lost).
	ExitCode int
	// Started is when COMMAND started; zero when it did not.
	Started time.Time
	// Time is when the event happened.
	Time time.Time
	// Reason says why a run failed when schedlock ended it (run
	// --max-runtime); empty otherwise.
	Reason string
}

// hasExitCode reports whether the event carries an exit code.
func (i Info) hasExitCode() bool {
	return i.Event == Success || i.Event == Failure || i.Event == Lost
}

// Set is the hooks of one run, by event.
type Set struct {
	Hooks map[Event][]Hook
	// Timeout bounds each event's hooks (DefaultTimeout when 0).
	Timeout time.Duration
	// Runner carries out the hooks; the zero value is ready to use.
	Runner Runner
	// Warn prints one line about a hook that failed.
	Warn func(string)
	// Note prints one line about a hook that worked (--verbose).
	Note func(string)
}

// Add adds h for ev.
func (s *Set) Add(ev Event, h Hook) {
	if s.Hooks == nil {
		s.Hooks = map[Event][]Hook{}
	}
	s.Hooks[ev] = append(s.Hooks[ev], h)
}

// Empty reports whether no event has a hook.
func (s *Set) Empty() bool {
	for _, hs := range s.Hooks {
		if len(hs) > 0 {
			return false
		}
	}
	return true
}

// Fire runs every hook of info.Event at once and returns when all have
// ended, Timeout has passed or ctx has ended, whichever is first: a hook
// still running then is abandoned (a command's process group killed).
// To report the end of a run that Ctrl-C interrupted, pass a context
// that the interruption did not end (context.WithoutCancel). A hook that
// fails, times out or is abandoned is reported through Warn.
func (s *Set) Fire(ctx context.Context, info Info) {
	hs := s.Hooks[info.Event]
	if len(hs) == 0 {
		return
	}
	if info.Time.IsZero() {
		info.Time = time.Now()
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var wg sync.WaitGroup
	for _, h := range hs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			what, err := s.Runner.run(hctx, h, info)
			switch {
			case err != nil && ctx.Err() != nil:
				s.say(s.Warn, "%s hook %s was abandoned: interrupted", h.Flag, what)
			case err != nil && hctx.Err() != nil:
				s.say(s.Warn, "%s hook %s timed out after %s (--hook-timeout); the run goes on: %v", h.Flag, what, timeout, err)
			case err != nil:
				s.say(s.Warn, "%s hook %s failed; the run goes on: %v", h.Flag, what, err)
			default:
				s.say(s.Note, "%s hook %s: done", h.Flag, what)
			}
		}()
	}
	wg.Wait()
}

func (s *Set) say(to func(string), format string, args ...any) {
	if to != nil {
		to(strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", "; "))
	}
}
