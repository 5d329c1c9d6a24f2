package lock

import (
	"context"

	"github.com/schedlock/schedlock/dialects"
)

// Locker and Options are this package's own types, documented here; the
// engine (package dialects) has its twins. These adapters carry a locker
// across, converting the options (one field list, which the compiler
// holds equal) and nothing else: a lease is the same value on both sides.

// engineLocker returns l as the engine's Locker: the engine's own locker
// when l only wraps one.
func engineLocker(l Locker) dialects.Locker {
	if u, ok := l.(fromEngine); ok {
		return u.Locker
	}
	return toEngine{l}
}

// userLocker returns the engine's locker l as a Locker: this package's own
// locker when l only wraps one.
func userLocker(l dialects.Locker) Locker {
	if e, ok := l.(toEngine); ok {
		return e.Locker
	}
	return fromEngine{l}
}

// toEngine is a Locker as the engine takes it.
type toEngine struct{ Locker }

func (a toEngine) Acquire(ctx context.Context, name string, opts dialects.Options) (dialects.Lease, error) {
	return a.Locker.Acquire(ctx, name, Options(opts))
}

// fromEngine is the engine's locker as a Locker.
type fromEngine struct{ dialects.Locker }

func (a fromEngine) Acquire(ctx context.Context, name string, opts Options) (Lease, error) {
	return a.Locker.Acquire(ctx, name, dialects.Options(opts))
}
