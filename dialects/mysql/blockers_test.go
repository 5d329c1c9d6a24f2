package mysql

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/internal/golden"
)

// TestBlockersGolden keeps the blocker statements in testdata (-update
// rewrites them); TestBlockersLive runs the MariaDB ones.
func TestBlockersGolden(t *testing.T) {
	stmts := BlockerStatements()
	keys := make([]string, 0, len(stmts))
	for k := range stmts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&out, "-- %s\n%s\n\n", k, stmts[k])
	}
	golden.Check(t, filepath.Join("testdata", "blockers.golden"), out.String())
}
