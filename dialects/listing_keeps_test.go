package dialects_test

import (
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

// ListOptions.Keeps, the filter of the backends that read every lock:
// strategy, name glob (or key without a name), states, free with All.
func TestListOptionsKeeps(t *testing.T) {
	held := dialects.LockEntry{Name: "report-daily", Strategy: dialects.StrategyTable, State: dialects.StateHeld}
	free := dialects.LockEntry{Name: "cleanup", Strategy: dialects.StrategyTable, State: dialects.StateFree}
	keyed := dialects.LockEntry{Key: "12345", Strategy: dialects.StrategySession, State: dialects.StateHeld}
	for _, tc := range []struct {
		name string
		opts dialects.ListOptions
		want []bool // held, free, keyed
	}{
		{"default: all but free", dialects.ListOptions{}, []bool{true, false, true}},
		{"all", dialects.ListOptions{All: true}, []bool{true, true, true}},
		{"name glob", dialects.ListOptions{Names: []string{"report-*"}, All: true}, []bool{true, false, false}},
		{"key when no name", dialects.ListOptions{Names: []string{"123*"}}, []bool{false, false, true}},
		{"states", dialects.ListOptions{States: []dialects.LockState{dialects.StateFree}}, []bool{false, true, false}},
		{"strategy", dialects.ListOptions{Strategy: dialects.StrategySession, All: true}, []bool{false, false, true}},
	} {
		for i, e := range []dialects.LockEntry{held, free, keyed} {
			if got := tc.opts.Keeps(e); got != tc.want[i] {
				t.Errorf("%s: Keeps(%+v) = %v, want %v", tc.name, e, got, tc.want[i])
			}
		}
	}
}
