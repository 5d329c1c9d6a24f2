package lock

import (
	"context"
	"log/slog"

	"github.com/schedlock/schedlock/dialects"
)

// Risk is a property of the store under which a lock can be handed to a
// second holder while the first still runs: a Redis without persistence
// (dialects.RiskNoPersistence), with RDB snapshots only, with an evicting
// maxmemory-policy, or with asynchronous replicas (Sentinel, Cluster). ID
// names it as `schedlock detect` does; Detail says what was found,
// Remedy what to do.
type Risk = dialects.Risk

// OpenOption changes what Open does.
type OpenOption func(*openConfig)

type openConfig struct {
	onRisk func(Risk)
}

// OnRisk makes Open call fn once for each risk of the store under which
// a lock can be handed to two holders (Risk; detection found it, no round
// trip more), before Open returns. Without it Open logs each one as a
// warning with slog.Default(), once per Open: message "schedlock: the
// store can hand a lock to two holders", attributes risk, detail and
// remedy. OnRisk(func(Risk) {}) keeps it quiet. A risk is never an error:
// Open succeeds, and what to do about it is the program's choice. SQL
// databases, etcd and ZooKeeper report no such risk.
func OnRisk(fn func(Risk)) OpenOption {
	return func(c *openConfig) { c.onRisk = fn }
}

// reportRisks hands every two-holder risk of b to cfg's OnRisk, or logs it.
func (cfg *openConfig) reportRisks(ctx context.Context, b dialects.Backend) {
	for _, r := range dialects.TwoHolderRisks(b) {
		if cfg.onRisk != nil {
			cfg.onRisk(r)
			continue
		}
		slog.Default().LogAttrs(ctx, slog.LevelWarn, "schedlock: the store can hand a lock to two holders",
			slog.String("risk", r.ID), slog.String("detail", r.Detail), slog.String("remedy", r.Remedy))
	}
}
