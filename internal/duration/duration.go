// Package duration parses the durations schedlock reads from its flags,
// their SCHEDLOCK_* variables and its own DSN options: Go's form
// (time.ParseDuration: 90s, 1h30m, 500ms) and ISO 8601's as
// java.time.Duration.parse reads it (PT90S, PT1H30M, P1D, PT0.5S), so a
// value written for ShedLock (lockAtMostFor = "PT30M") is taken as it is.
package duration

import (
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Hint is how a message says what a duration looks like.
const Hint = "write it as 90s, 1h30m or 500ms, or in ISO 8601 as PT90S, PT1H30M or P1D"

// HelpText says, for --help, which durations are taken.
const HelpText = "Durations are written as 90s, 1h30m or 500ms, or in ISO 8601 as ShedLock writes them (java.time.Duration): PT90S, PT1H30M, PT0.5S, P1D (a day is 24h). Months, weeks and years (P1M, P1W, P1Y) have no fixed length and are refused."

// ErrCalendar is the error of an ISO 8601 duration with months, weeks or
// years: their length depends on the calendar.
var ErrCalendar = errors.New("months, weeks and years have no fixed length: write days (P30D; a day is 24h), hours or minutes")

// isoPattern is java.time.Duration's grammar, case-insensitive: an
// optional sign, P, then days, and after T hours, minutes and seconds
// with up to 9 fraction digits after '.' or ','; each number may carry a
// sign of its own.
var isoPattern = regexp.MustCompile(`(?i)^([-+]?)P(?:([-+]?[0-9]+)D)?(T(?:([-+]?[0-9]+)H)?(?:([-+]?[0-9]+)M)?(?:([-+]?[0-9]+)(?:[.,]([0-9]{0,9}))?S)?)?$`)

// calendarPattern is an ISO 8601 duration with years, months or weeks
// (before any T, M is months).
var calendarPattern = regexp.MustCompile(`(?i)^[-+]?P[^T]*[0-9][YMW]`)

// Parse reads s in Go's form or, when it starts with P (after an
// optional sign), in ISO 8601's as java.time.Duration.parse does: at
// least one of days (24h each), hours, minutes and seconds, "T" before
// the time parts. A calendar part (P1M, P1W, P1Y) is ErrCalendar.
// Durations beyond time.Duration's range (about 292 years) are refused.
//
// Errors do not quote s (flag parsing quotes it already); they say what is
// wrong and what a duration looks like, in one line.
func Parse(s string) (time.Duration, error) {
	if !isISO(s) {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, errors.New("not a duration: " + Hint)
		}
		return d, nil
	}
	return ParseISO(s)
}

// isISO reports whether s is meant as an ISO 8601 duration.
func isISO(s string) bool {
	s = strings.TrimLeft(s, "+-")
	return s != "" && (s[0] == 'P' || s[0] == 'p')
}

// ParseISO reads s as java.time.Duration.parse does (see Parse).
func ParseISO(s string) (time.Duration, error) {
	m := isoPattern.FindStringSubmatch(s)
	switch {
	case m == nil && calendarPattern.MatchString(s):
		return 0, ErrCalendar
	case m == nil, len(m[3]) == 1, m[2] == "" && m[4] == "" && m[5] == "" && m[6] == "":
		// No part, or a T with no time part after it (PT).
		return 0, errors.New("not an ISO 8601 duration: " + Hint)
	}
	// Seconds, then minutes, hours and days are added, as Java adds them.
	var secs int64
	for _, p := range []struct {
		text string
		unit int64
	}{{m[6], 1}, {m[5], 60}, {m[4], 3600}, {m[2], 86400}} {
		if p.text == "" {
			continue
		}
		n, err := strconv.ParseInt(p.text, 10, 64)
		if err != nil {
			return 0, errRange
		}
		part, ok := mul(n, p.unit)
		if !ok {
			return 0, errRange
		}
		if secs, ok = add(secs, part); !ok {
			return 0, errRange
		}
	}
	var nanos int64
	if frac := m[7]; frac != "" {
		n, _ := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
		nanos = n
		if strings.HasPrefix(m[6], "-") {
			nanos = -n
		}
	}
	// secs*1e9 + nanos must fit time.Duration.
	total, ok := mul(secs, int64(time.Second))
	if ok {
		total, ok = add(total, nanos)
	}
	if !ok {
		return 0, errRange
	}
	if m[1] == "-" {
		if total == math.MinInt64 {
			return 0, errRange
		}
		total = -total
	}
	return time.Duration(total), nil
}

var errRange = errors.New("out of range: a duration can be at most about 292 years")

// mul is a*b, and whether it did not overflow.
func mul(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	p := a * b
	if p/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		return 0, false
	}
	return p, true
}

// add is a+b, and whether it did not overflow.
func add(a, b int64) (int64, bool) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		return 0, false
	}
	return s, true
}
