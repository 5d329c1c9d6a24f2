package redis_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/redis"
)

// LeaseRoom reads maxmemory: none set, no limit; set to 200 kB above what
// is used, the room is those 200 kB over one lease's measured keys.
func TestLeaseRoomLive(t *testing.T) {
	b, plain := openLive(t), liveClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tl, err := b.Locker(dialects.StrategyTable, dialects.Table{Name: "schedlock_room_" + dialects.NewOwner()[len(dialects.NewOwner())-8:]})
	if err != nil {
		t.Fatal(err)
	}
	l := tl.(*redis.Locker)
	defer l.DropTable(context.Background())
	old, err := plain.ConfigGet(ctx, "maxmemory").Result()
	if err != nil {
		t.Fatal(err)
	}
	defer plain.ConfigSet(context.Background(), "maxmemory", old["maxmemory"])
	if err := plain.ConfigSet(ctx, "maxmemory", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if _, _, limited, err := l.LeaseRoom(ctx); err != nil || limited {
		t.Fatalf("LeaseRoom without maxmemory: limited %v, %v; want no limit", limited, err)
	}
	info, err := plain.Info(ctx, "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	var used int64
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			used, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	if err := plain.ConfigSet(ctx, "maxmemory", strconv.FormatInt(used+200_000, 10)).Err(); err != nil {
		t.Fatal(err)
	}
	room, limit, limited, err := l.LeaseRoom(ctx)
	if err != nil || !limited || !strings.Contains(limit, "maxmemory") {
		t.Fatalf("LeaseRoom = %d, %q, %v, %v; want a room limited by maxmemory", room, limit, limited, err)
	}
	// 200 kB hold some hundreds of leases (a lease's keys take well over
	// 50 bytes and well under 2 kB).
	if room < 100 || room > 4000 {
		t.Errorf("room %d leases (%s) for 200 kB, want some hundreds", room, limit)
	}
}
