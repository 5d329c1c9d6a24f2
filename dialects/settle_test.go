package dialects

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestSettledSendsNothingOnAnEndedContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sent := false
	_, err := Settled(ctx, func(context.Context) (int, error) { sent = true; return 1, nil })
	if !errors.Is(err, context.Canceled) || sent {
		t.Errorf("Settled on an ended context: %v, sent %v; want context.Canceled, nothing sent", err, sent)
	}
}

func TestSettledWaitsForTheAnswerAfterTheContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "v"))
	got, err := Settled(ctx, func(sctx context.Context) (string, error) {
		cancel() // the caller gives up while the statement is on its way
		select {
		case <-sctx.Done():
			return "", sctx.Err()
		case <-time.After(100 * time.Millisecond): // the server answers
		}
		return sctx.Value(ctxKey{}).(string), nil
	})
	if err != nil || got != "v" {
		t.Errorf("Settled = %q, %v; want the answer, with ctx's values", got, err)
	}
}

func TestSettledGivesUpAfterTheGrace(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	_, err := settled(ctx, 50*time.Millisecond, func(sctx context.Context) (int, error) {
		cancel()
		<-sctx.Done() // a server that never answers
		return 0, sctx.Err()
	})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "may have been taken") {
		t.Errorf("Settled past the grace: %v, want the caller's context error, the outcome unknown", err)
	}
}

func TestAbandonKeepsTheCause(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	released := func(rctx context.Context) error { return rctx.Err() } // the release runs despite ctx
	if err := Abandon(ctx, context.DeadlineExceeded, released); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "released again") {
		t.Errorf("%v does not match the cause, released", err)
	}
	err := Abandon(ctx, context.Canceled, func(context.Context) error { return errors.New("connection refused") })
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("%v: want the cause and the failed release", err)
	}
}

type ctxKey struct{}
