package redis

import (
	"context"
	"fmt"
	"strconv"

	"github.com/schedlock/schedlock/dialects"
)

// LeaseRoom is how many more leases of this layout the server's memory
// can hold: (maxmemory − used_memory) over the memory of one lease's keys,
// measured with MEMORY USAGE on a probe lease taken and released for it.
// limited is false when the server has no maxmemory (it then holds what
// its host's memory allows). limit names the setting and its values.
func (l *Locker) LeaseRoom(ctx context.Context) (room int, limit string, limited bool, err error) {
	raw, err := l.b.client.Info(ctx, "memory").Result()
	if err != nil {
		return 0, "", false, dialects.Wrap(Name, "lease room", l.explain(err))
	}
	info := parseInfo(raw)
	maxMemory, _ := strconv.ParseInt(info["maxmemory"], 10, 64)
	used, _ := strconv.ParseInt(info["used_memory"], 10, 64)
	if maxMemory <= 0 {
		return 0, "", false, nil
	}
	name := "schedlock-room-probe-" + dialects.NewOwner()
	lease, err := l.Acquire(ctx, name, dialects.Options{})
	if err != nil {
		return 0, "", false, err
	}
	var per int64
	for _, k := range l.layout.lockKeys(name) {
		n, err := l.b.client.MemoryUsage(ctx, k).Result()
		if err != nil && !isNil(err) {
			_ = lease.Release(ctx)
			return 0, "", false, dialects.Wrap(Name, "lease room", l.explain(err))
		}
		per += n
	}
	if err := lease.Release(ctx); err != nil {
		return 0, "", false, err
	}
	if l.layout.native {
		// The token counter outlives the lease; the probe's goes with it.
		_ = l.b.client.Del(ctx, l.layout.lockKeys(name)...).Err()
	}
	per = max(per, 1)
	room = int(max(maxMemory-used, 0) / per)
	return room, fmt.Sprintf("maxmemory %d bytes, %d used, about %d bytes a lease", maxMemory, used, per), true, nil
}
