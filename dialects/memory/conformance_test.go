package memory_test

import (
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
	"github.com/schedlock/schedlock/dialects/memory"
)

// TestConformance runs the lock contract's suite on a fresh store.
func TestConformance(t *testing.T) {
	b, err := memory.Open("conformance-" + dialects.NewOwner())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	dialecttest.Run(t, b, dialecttest.Options{})
}
