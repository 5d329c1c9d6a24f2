package sqlkit

import (
	"errors"
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// unsupportedReason is the message of an ErrUnsupported error without the
// dialect, operation and sentinel prefixes, nor the remedy of the table
// strategy.
func unsupportedReason(err error) string {
	var de *dialects.Error
	for errors.As(err, &de) {
		err = de.Err
	}
	var re *dialects.RemedyError
	if errors.As(err, &re) && re.Fix == dialects.UseTableStrategy {
		return strings.TrimPrefix(re.Err.Error(), dialects.ErrUnsupported.Error()+": ")
	}
	msg := strings.TrimPrefix(err.Error(), dialects.ErrUnsupported.Error()+": ")
	// A reason still worded with its remedy in the text ("…; use …"):
	// the capability carries the remedy apart.
	if i := strings.LastIndex(msg, "; use "); i >= 0 {
		msg = msg[:i]
	}
	return msg
}

// clockSamples is how many readings MeasureClock takes; it keeps the one
// with the shortest round trip.
const clockSamples = 3

// DefaultRowProbeWait is RowLockProbe.Wait when it is zero.
const DefaultRowProbeWait = 3 * time.Second

// cleanupTimeout bounds the rollback and DROP TABLE that end a probe; they
// run even when the caller's context has ended.
const cleanupTimeout = 10 * time.Second

// notProbedNoCreate ends the Detail of a row-lock capability judged by
// version because the probe table could not be created.
const notProbedNoCreate = " (not probed: cannot create the probe table)"

// connWait bounds the wait for a pooled connection during a probe, so a
// pool exhausted by others cannot hang it.
const connWait = 10 * time.Second
