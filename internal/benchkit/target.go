package benchkit

import (
	"context"
	"fmt"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/benchops"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// target is the backend under measurement and what its bench support adds
// to it: for a SQL database (*sqlkit.DB) its pool and raw session-lock
// statements, for a lock store its raw commands (benchops.StoreBaseline). Everything
// else — engine cycles, contention, held locks, hand-over — goes through
// Backend.Locker and so works on any backend.
type target struct {
	backend dialects.Backend
	dialect string
	db      *sqlkit.DB               // nil unless a SQL database
	session benchops.SessionBaseline // raw session statements of a SQL database, or nil
	store   benchops.StoreBaseline   // raw commands of a store, or nil
}

func newTarget(b dialects.Backend) *target {
	t := &target{backend: b, dialect: b.Detected().Dialect}
	if db, ok := sqlkit.Of(b); ok {
		t.db = db
		t.session, _ = b.(SessionBaseline)
		return t
	}
	t.store, _ = b.(benchops.StoreBaseline)
	return t
}

// hasRaw reports whether locker l has raw commands to be compared with:
// the session statements of a SQL database, every strategy of a store
// with raw commands.
func (t *target) hasRaw(l dialects.Locker) bool {
	if t.db != nil {
		return l.Strategy() == dialects.StrategySession && t.session != nil
	}
	return t.store != nil
}

// hasRoundTrip reports whether the round trip can be measured: always on
// a SQL database, on a store when its support gives raw commands.
func (t *target) hasRoundTrip() bool { return t.db != nil || t.store != nil }

// roundTripStatement is the trivial statement of a SQL database's round
// trip, for the report.
func (t *target) roundTripStatement() string {
	if rt, ok := roundTripper(t.backend); ok {
		return rt.RoundTripSQL()
	}
	return DefaultRoundTripSQL
}

// roundTripName is the command a store's round trip runs, for the report.
func (t *target) roundTripName() string {
	if rt, ok := roundTripper(t.backend); ok {
		return rt.RoundTripSQL()
	}
	return "round trip"
}

// storeOps opens one client of the store with its raw commands.
func (t *target) storeOps(ctx context.Context) (StoreOps, error) {
	ops, err := t.store.RawStoreOps(ctx)
	if err != nil {
		return StoreOps{}, fmt.Errorf("open a raw client: %w", err)
	}
	if ops.RoundTrip == nil || ops.TryLock == nil || ops.Unlock == nil {
		closeOps(ops)
		return StoreOps{}, fmt.Errorf("%w: the raw commands of %s are incomplete", dialects.ErrUnsupported, t.dialect)
	}
	return ops, nil
}

// sessionOps opens one driver connection with the raw session statements.
func (t *target) sessionOps(ctx context.Context) (SessionOps, error) {
	ops, err := t.session.RawSession(ctx)
	if err != nil {
		return SessionOps{}, fmt.Errorf("open a raw connection: %w", err)
	}
	if ops.RoundTrip == nil || ops.TryLock == nil || ops.Unlock == nil {
		closeSession(ops)
		return SessionOps{}, fmt.Errorf("%w: the raw statements of %s are incomplete", dialects.ErrUnsupported, t.dialect)
	}
	return ops, nil
}

// workerLockers returns one locker per worker: for session locks a
// locker of its own each (as separate processes would have), closed by
// closeAll; a table locker, holding no state between statements, is
// shared.
func (t *target) workerLockers(l dialects.Locker, workers int) (lockers []dialects.Locker, closeAll func(), err error) {
	closeAll = func() {
		for _, w := range lockers {
			if c, ok := w.(interface{ Close() error }); ok && w != l {
				_ = c.Close()
			}
		}
	}
	for range workers {
		w := l
		if l.Strategy() == dialects.StrategySession {
			if w, err = t.backend.Locker(dialects.StrategySession, dialects.Table{}); err != nil {
				closeAll()
				return nil, func() {}, err
			}
		}
		lockers = append(lockers, w)
	}
	return lockers, closeAll, nil
}
