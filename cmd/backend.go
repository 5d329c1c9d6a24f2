package cmd

import (
	"fmt"

	"github.com/schedlock/schedlock/dialects"
)

// The commands beyond `run` need more of a backend than its lockers; each
// asks for the optional interface it needs and says plainly when the
// backend has none.

// prober returns b's Prober (`detect`).
func prober(b dialects.Backend) (dialects.Prober, error) {
	if p, ok := b.(dialects.Prober); ok {
		return p, nil
	}
	return nil, missingFeature(b, "cannot probe its database")
}

// lockLister returns b's LockLister (`locks ls`).
func lockLister(b dialects.Backend) (dialects.LockLister, error) {
	if l, ok := b.(dialects.LockLister); ok {
		return l, nil
	}
	return nil, missingFeature(b, "cannot list its locks")
}

// lockBreaker returns b's LockBreaker (`unlock`).
func lockBreaker(b dialects.Backend) (dialects.LockBreaker, error) {
	if l, ok := b.(dialects.LockBreaker); ok {
		return l, nil
	}
	return nil, missingFeature(b, "cannot free a lock it does not hold")
}

func missingFeature(b dialects.Backend, what string) error {
	return fmt.Errorf("%w: the %s backend %s", dialects.ErrUnsupported, b.Detected().Dialect, what)
}
