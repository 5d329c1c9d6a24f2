package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/cenkalti/backoff/v5"
)

// Payload is the JSON body of a URL hook's POST. Field names are a stable
// interface; times are RFC 3339 UTC with milliseconds, as every time in
// schedlock's JSON (output.TimeLayout). healthchecks.io keeps the body in
// the check's event log.
type Payload struct {
	Event string `json:"event"`
	Lock  string `json:"lock"`
	Host  string `json:"host,omitempty"`
	Owner string `json:"owner,omitempty"`
	// ExitCode is set for success, failure and lost.
	ExitCode *int `json:"exit_code,omitempty"`
	// Started is when COMMAND started (start and the end events).
	Started string `json:"started,omitempty"`
	// DurationSeconds is COMMAND's run time (the end events).
	DurationSeconds *float64 `json:"duration_seconds,omitempty"`
	Time            string   `json:"time"`
	// Reason says why schedlock ended a failed run (--max-runtime).
	Reason string `json:"reason,omitempty"`
}

// TimeLayout is the layout of the payload's times: RFC 3339 in UTC with
// three fraction digits, the layout of every time in schedlock's JSON
// (output.TimeLayout, which a test holds it to).
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// payload is info as a Payload.
func payload(info Info) Payload {
	p := Payload{Event: string(info.Event), Lock: info.Lock, Host: info.Host, Owner: info.Owner, Time: info.Time.UTC().Format(TimeLayout), Reason: info.Reason}
	if info.hasExitCode() {
		code := info.ExitCode
		p.ExitCode = &code
	}
	if !info.Started.IsZero() {
		p.Started = info.Started.UTC().Format(TimeLayout)
		if info.Event != Start {
			d := info.Time.Sub(info.Started).Seconds()
			p.DurationSeconds = &d
		}
	}
	return p
}

// Backoff returns the back-off between the tries of a URL hook: 250ms,
// then doubling, each randomised by ±50% so that the nodes of a fleet
// do not retry in step. It is a variable so tests can shorten it.
var Backoff = func() backoff.BackOff {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = 250 * time.Millisecond
	b.Multiplier = 2
	b.RandomizationFactor = 0.5
	b.MaxInterval = 2 * time.Second
	return b
}

// post requests u with info's payload until it answers 2xx, a final error
// comes, MaxTries have been made or ctx ends. The error names the last
// failure and the number of tries; it never holds the URL (net/http's
// errors quote it), which the caller shows redacted.
func (r *Runner) post(ctx context.Context, u *url.URL, info Info) error {
	body, err := json.Marshal(payload(info))
	if err != nil {
		return fmt.Errorf("encode the payload: %w", err)
	}
	client := r.Client
	if client == nil {
		client = http.DefaultClient
	}
	tries := 0
	var last error
	_, err = backoff.Retry(ctx, func() (struct{}, error) {
		tries++
		last = r.try(ctx, client, u, body)
		return struct{}{}, last
	}, backoff.WithBackOff(Backoff()), backoff.WithMaxTries(MaxTries), backoff.WithMaxElapsedTime(0))
	if err == nil {
		return nil
	}
	if last == nil {
		last = err
	}
	if tries > 1 {
		return fmt.Errorf("%w (%d tries)", last, tries)
	}
	return last
}

// try makes one request. A final error is wrapped in backoff.Permanent, a
// Retry-After answer in backoff.RetryAfter.
func (r *Runner) try(ctx context.Context, client *http.Client, u *url.URL, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return backoff.Permanent(errors.New("cannot build the request"))
	}
	req.Header.Set("Content-Type", "application/json")
	ua := r.UserAgent
	if ua == "" {
		ua = "schedlock"
	}
	req.Header.Set("User-Agent", ua)
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL, which may hold a secret
		}
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	statusErr := fmt.Errorf("answered %s", resp.Status)
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable:
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
			return &retryAfter{err: statusErr, after: backoff.RetryAfter(s)}
		}
		return statusErr
	case resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode >= 500:
		return statusErr
	}
	return backoff.Permanent(statusErr)
}

// retryAfter is a status error that asks for a given delay: it reads as
// the status and matches backoff's RetryAfterError.
type retryAfter struct {
	err   error
	after error
}

func (e *retryAfter) Error() string { return e.err.Error() }

func (e *retryAfter) Unwrap() []error { return []error{e.err, e.after} }
