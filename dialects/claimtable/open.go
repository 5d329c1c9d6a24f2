package claimtable

import (
	"context"
	"fmt"
	"slices"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// Open returns the claimer of table t on an opened backend. The strategy
// is opts.Strategy, else the one the backend's probe recommends (a probe
// that proves SKIP LOCKED or READPAST on a probe table and knows the
// products whose SKIP LOCKED is not a lock: TiDB, CockroachDB), else
// optimistic. Backends without rows (Redis, etcd, ZooKeeper, memory) give
// ErrUnsupported.
func Open(ctx context.Context, backend dialects.Backend, t Table, opts Options) (*Claimer, error) {
	db, b, err := sqlBackend(backend)
	if err != nil {
		return nil, err
	}
	strategy := opts.Strategy
	if strategy == "" {
		if strategy, _, err = Recommend(ctx, backend); err != nil {
			return nil, err
		}
	}
	return New(db.SQL, b, t, strategy, opts)
}

// Recommend is the claim strategy the backend's probe recommends and why,
// narrowed to the strategies its dialect can run.
func Recommend(ctx context.Context, backend dialects.Backend) (dialects.ClaimStrategy, string, error) {
	_, b, err := sqlBackend(backend)
	if err != nil {
		return "", "", err
	}
	p, ok := backend.(dialects.Prober)
	if !ok {
		return dialects.ClaimOptimistic, "the backend has no probe; optimistic claims need no row locks", nil
	}
	caps, err := p.Probe(ctx, dialects.ProbeOptions{})
	if err != nil {
		return "", "", err
	}
	s, why := caps.Recommended.ClaimStrategy, caps.Recommended.ClaimReason
	if !slices.Contains(b.Strategies(), s) {
		return dialects.ClaimOptimistic, fmt.Sprintf("the probe recommends %s, which this dialect's claims cannot run; optimistic claims need no row locks", s), nil
	}
	return s, why, nil
}

// Supported reports whether backend has task-row claims.
func Supported(backend dialects.Backend) bool {
	_, _, err := sqlBackend(backend)
	return err == nil
}

func sqlBackend(backend dialects.Backend) (*sqlkit.DB, Builder, error) {
	db, ok := sqlkit.Of(backend)
	if !ok {
		return nil, nil, fmt.Errorf("%w: %s has no task rows to claim (claims need a SQL database)", dialects.ErrUnsupported, backend.Detected().Dialect)
	}
	b, ok := BuilderOf(backend)
	if !ok {
		return nil, nil, fmt.Errorf("%w: the %s dialect has no task-row claims", dialects.ErrUnsupported, db.Info.Dialect)
	}
	return db, b, nil
}

// ReadColumns reads a task table's column names on an opened SQL backend, for
// Claimer.CheckColumns.
func ReadColumns(backend dialects.Backend) ColumnReader {
	return func(ctx context.Context, table string) ([]string, error) {
		db, ok := sqlkit.Of(backend)
		if !ok {
			return nil, fmt.Errorf("%w: no tables on %s", dialects.ErrUnsupported, backend.Detected().Dialect)
		}
		return db.TableColumns(ctx, dialects.Table{Name: table})
	}
}
