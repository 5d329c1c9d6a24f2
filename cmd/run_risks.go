package cmd

import "github.com/schedlock/schedlock/dialects"

// warnRisks prints one line on stderr per risk of db under which the
// store can hand the lock to a second holder while this one runs
// (dialects.TwoHolderRisks: what detection found, no round trip): its
// name, what was found and the remedy. A warning, never an error; -q
// silences it.
func (o *RunOptions) warnRisks(db dialects.Backend) {
	for _, r := range dialects.TwoHolderRisks(db) {
		o.note(!o.Global.Quiet, "warning: risk %s can hand the lock to two holders: %s; remedy: %s", r.ID, r.Detail, r.Remedy)
	}
}
