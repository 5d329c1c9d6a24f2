package nats_test

import (
	"testing"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
)

// TestConformance runs the lock contract's suite on an embedded server.
func TestConformance(t *testing.T) {
	b := open(t, embedded(t))
	dialecttest.Run(t, b, dialecttest.Options{Tables: []dialects.Table{{Name: checks.NewPrefix()}}})
}

// TestConformanceLive runs it on the live server of SCHEDLOCK_TEST_NATS_DSN.
func TestConformanceLive(t *testing.T) {
	b := open(t, liveDSN(t))
	dialecttest.Run(t, b, dialecttest.Options{Tables: []dialects.Table{{Name: checks.NewPrefix()}}})
}
