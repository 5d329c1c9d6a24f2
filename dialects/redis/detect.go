package redis

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	goredis "github.com/redis/go-redis/v9"

	"github.com/schedlock/schedlock/dialects"
)

// Facts is what detection read from INFO (and CONFIG GET where allowed).
type Facts struct {
	Version string
	// Mode is ModeStandalone, ModeSentinel (the DSN went through
	// sentinels) or ModeCluster.
	Mode string
	// Role is "master" or "slave" (a replica); MasterAddr a replica's
	// master.
	Role       string
	MasterAddr string
	// Replicas is the master's count of connected replicas, to which
	// writes are copied asynchronously.
	Replicas int
	// MaxMemory is the memory limit in bytes (0: none) and
	// MaxMemoryPolicy what happens at it ("noeviction", "allkeys-lru", …).
	MaxMemory       int64
	MaxMemoryPolicy string
	// AOF is whether the append-only file is on; RDBSave is the "save"
	// setting ("" when off, "?" when CONFIG GET is refused).
	AOF     bool
	RDBSave string
}

// detect reads the deployment's facts. mode is what the DSN asked for.
func detect(ctx context.Context, c goredis.UniversalClient, mode string) (*Facts, error) {
	raw, err := c.Info(ctx).Result()
	if err != nil {
		return nil, err
	}
	kv := parseInfo(raw)
	f := &Facts{Version: kv["redis_version"], Mode: mode, Role: kv["role"], MaxMemoryPolicy: kv["maxmemory_policy"], AOF: kv["aof_enabled"] == "1"}
	if kv["redis_mode"] == ModeCluster || kv["cluster_enabled"] == "1" {
		f.Mode = ModeCluster
	}
	if h := kv["master_host"]; h != "" {
		f.MasterAddr = h + ":" + kv["master_port"]
	}
	f.Replicas, _ = strconv.Atoi(kv["connected_slaves"])
	f.MaxMemory, _ = strconv.ParseInt(kv["maxmemory"], 10, 64)
	f.RDBSave = "?"
	if cfg, err := c.ConfigGet(ctx, "save").Result(); err == nil {
		f.RDBSave = strings.TrimSpace(cfg["save"])
	}
	return f, nil
}

// parseInfo reads INFO's "key:value" lines.
func parseInfo(raw string) map[string]string {
	kv := map[string]string{}
	for _, line := range strings.Split(raw, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			kv[k] = v
		}
	}
	return kv
}

func (f *Facts) info() dialects.Info {
	return dialects.Info{Dialect: Name, Product: Product, Version: f.Version, Mode: f.Mode,
		Banner: fmt.Sprintf("Redis %s (%s, %s)", f.Version, f.Mode, f.Role)}
}

// evicts reports whether the policy removes keys under memory pressure;
// volatile-* policies remove keys with an expiry, which every lock key
// has.
func evicts(policy string) bool {
	return policy != "" && policy != "noeviction"
}

// evictionRisk says why this store can evict a lock key, or "".
func (f *Facts) evictionRisk() string {
	if f.MaxMemory > 0 && evicts(f.MaxMemoryPolicy) {
		return fmt.Sprintf("this Redis evicts keys when full (maxmemory %d bytes, maxmemory-policy %s), and an evicted lock key is a lock given to a second holder", f.MaxMemory, f.MaxMemoryPolicy)
	}
	return ""
}

// risks are what the deployment cannot promise, with what to do; every
// one of them can hand a lock to two holders (dialects.Risk.TwoHolders).
func (f *Facts) risks() []dialects.Risk {
	var out []dialects.Risk
	if r := f.evictionRisk(); r != "" {
		out = append(out, dialects.Risk{ID: dialects.RiskEviction, Detail: r + "; schedlock refuses to lock here",
			Remedy: "set maxmemory-policy noeviction, or keep locks on a Redis without maxmemory"})
	} else if evicts(f.MaxMemoryPolicy) {
		out = append(out, dialects.Risk{ID: dialects.RiskEvictionPolicy, Detail: fmt.Sprintf("maxmemory-policy %s evicts keys once a maxmemory limit is set (none is now)", f.MaxMemoryPolicy),
			Remedy: "set maxmemory-policy noeviction before setting maxmemory"})
	}
	switch {
	case !f.AOF && f.RDBSave == "":
		out = append(out, dialects.Risk{ID: dialects.RiskNoPersistence, Detail: "persistence is off (no AOF, no RDB save points): a restart forgets every lock, and a second holder can take one whose holder still runs until its next refresh (with a higher fencing token: its floor is the server's clock)",
			Remedy: "turn on appendonly yes (appendfsync everysec or always), or use a database lock where a restart must not free locks"})
	case !f.AOF && f.RDBSave == "?":
		out = append(out, dialects.Risk{ID: dialects.RiskPersistenceUnknown, Detail: "no AOF, and the RDB save setting could not be read (CONFIG GET is refused): a restart may forget the locks",
			Remedy: "turn on appendonly yes with appendfsync always or everysec"})
	case !f.AOF:
		out = append(out, dialects.Risk{ID: dialects.RiskRDBOnly, Detail: fmt.Sprintf("only RDB snapshots (save %q): a crash or restart loses the locks taken since the last snapshot", f.RDBSave),
			Remedy: "turn on appendonly yes with appendfsync always or everysec"})
	}
	if f.Replicas > 0 || f.Mode == ModeSentinel || f.Mode == ModeCluster {
		out = append(out, dialects.Risk{ID: dialects.RiskAsyncReplication, Detail: "replication is asynchronous (the lock scripts do not WAIT for replicas): a failover can promote a replica that never saw a lock, and a second holder takes it",
			Remedy: "pass the fencing token to the resource and have it refuse older tokens, or use etcd, ZooKeeper or a database lock where a failover must not free locks"})
	}
	return out
}
