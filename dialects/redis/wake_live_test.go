package redis_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/redis"
)

// hourPoll waits up to a minute but polls only every hour: a waiter that
// gets the lock within the test's deadline was woken.
var hourPoll = dialects.Options{Owner: "waiter", AtMost: time.Hour, Wait: time.Minute, RetryEvery: time.Hour}

// acquireInBackground acquires name through l with opts in the background.
func acquireInBackground(ctx context.Context, l dialects.Locker, name string, opts dialects.Options) <-chan error {
	got := make(chan error, 1)
	go func() {
		lease, err := l.Acquire(ctx, name, opts)
		if err == nil {
			err = lease.Release(context.WithoutCancel(ctx))
		}
		got <- err
	}()
	return got
}

// awaitSubscribers waits until channel has n subscribers (PUBSUB
// NUMSUB): the waiter was refused and listens.
func awaitSubscribers(t *testing.T, ctx context.Context, c *goredis.Client, channel string, n int64) {
	t.Helper()
	for {
		subs, err := c.PubSubNumSub(ctx, channel).Result()
		if err != nil {
			t.Fatal(err)
		}
		if subs[channel] == n {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("channel %s has %d subscribers, want %d: %v", channel, subs[channel], n, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// A waiter in another backend (another process) is woken by the
// holder's release, on both layouts: with RetryEvery an hour, it still
// gets the lock once the holder released, and stops listening after.
func TestWaiterIsWokenByTheRelease(t *testing.T) {
	holderB, waiterB, plain := openLive(t), openLive(t), liveClient(t)
	suffix := dialects.NewOwner()[len(dialects.NewOwner())-8:]
	for _, tc := range []struct {
		table dialects.Table
		key   func(name string) string
	}{
		{dialects.Table{Name: "schedlock_wake_" + suffix}, func(n string) string { return "schedlock_wake_" + suffix + ":{" + n + "}" }},
		{dialects.Table{Preset: dialects.PresetShedlock, Name: "wake" + suffix}, func(n string) string { return "job-lock:wake" + suffix + ":" + n }},
	} {
		t.Run(tc.table.Preset+tc.table.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			holderL, err := holderB.Locker(dialects.StrategyTable, tc.table)
			if err != nil {
				t.Fatal(err)
			}
			waiterL, err := waiterB.Locker(dialects.StrategyTable, tc.table)
			if err != nil {
				t.Fatal(err)
			}
			defer holderL.(dialects.TableDropper).DropTable(context.Background())
			held, err := holderL.Acquire(ctx, "job", dialects.Options{Owner: "holder", AtMost: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			got := acquireInBackground(ctx, waiterL, "job", hourPoll)
			channel := tc.key("job") + ":released"
			awaitSubscribers(t, ctx, plain, channel, 1)
			if err := held.Release(ctx); err != nil {
				t.Fatal(err)
			}
			if err := <-got; err != nil {
				t.Fatalf("the waiter was not handed the lock after the release: %v", err)
			}
			awaitSubscribers(t, ctx, plain, channel, 0)
		})
	}
}

// With keyspace notifications on, a waiter is woken when the key goes by
// any other way: deleted by another program (a ShedLock node's unlock,
// which publishes nothing) or expired.
func TestWaiterIsWokenByKeyspaceEvents(t *testing.T) {
	holderB, waiterB, plain := openLive(t), openLive(t), liveClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	before, err := plain.ConfigGet(ctx, "notify-keyspace-events").Result()
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.ConfigSet(ctx, "notify-keyspace-events", "Kgx").Err(); err != nil {
		t.Fatal(err)
	}
	defer plain.ConfigSet(context.Background(), "notify-keyspace-events", before["notify-keyspace-events"])
	table := dialects.Table{Name: "schedlock_keyspace_" + dialects.NewOwner()[len(dialects.NewOwner())-8:]}
	holderL, err := holderB.Locker(dialects.StrategyTable, table)
	if err != nil {
		t.Fatal(err)
	}
	waiterL, err := waiterB.Locker(dialects.StrategyTable, table)
	if err != nil {
		t.Fatal(err)
	}
	defer holderL.(dialects.TableDropper).DropTable(context.Background())
	key := table.Name + ":{job}"
	for _, free := range []struct {
		how string
		do  func() error
	}{
		{"deleted", func() error { return plain.Del(ctx, key).Err() }},
		{"expired", func() error { return plain.PExpire(ctx, key, 20*time.Millisecond).Err() }},
	} {
		if _, err := holderL.Acquire(ctx, "job", dialects.Options{Owner: "holder", AtMost: time.Hour}); err != nil {
			t.Fatal(err)
		}
		got := acquireInBackground(ctx, waiterL, "job", hourPoll)
		awaitSubscribers(t, ctx, plain, "__keyspace@0__:"+key, 1)
		if err := free.do(); err != nil {
			t.Fatal(err)
		}
		if err := <-got; err != nil {
			t.Fatalf("key %s: the waiter was not handed the lock: %v", free.how, err)
		}
	}
}

// A Redis user that may not use Pub/Sub channels (Redis 7's default for
// new ACL users, resetchannels) still releases — the script's PUBLISH is
// a PCALL — and its waiters still get the lock by the poll.
func TestUserWithoutChannelsReleasesAndPolls(t *testing.T) {
	plain := liveClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	user := "nochannels" + dialects.NewOwner()[len(dialects.NewOwner())-6:]
	if err := plain.Do(ctx, "ACL", "SETUSER", user, "on", ">pw", "~*", "resetchannels", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	defer plain.Do(context.Background(), "ACL", "DELUSER", user)
	u, err := url.Parse(liveDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(user, "pw")
	open := func() *redis.Backend {
		b, err := redis.Open(ctx, u.String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = b.Close() })
		return b
	}
	table := dialects.Table{Name: "schedlock_nochannels_" + dialects.NewOwner()[len(dialects.NewOwner())-8:]}
	holderL, err := open().Locker(dialects.StrategyTable, table)
	if err != nil {
		t.Fatal(err)
	}
	waiterL, err := open().Locker(dialects.StrategyTable, table)
	if err != nil {
		t.Fatal(err)
	}
	defer holderL.(dialects.TableDropper).DropTable(context.Background())
	held, err := holderL.Acquire(ctx, "job", dialects.Options{Owner: "holder", AtMost: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	polling := hourPoll
	polling.RetryEvery = 20 * time.Millisecond
	got := acquireInBackground(ctx, waiterL, "job", polling)
	// Let the waiter be refused and fall back to the poll before the
	// release (it gets the lock either way).
	time.Sleep(100 * time.Millisecond)
	if err := held.Release(ctx); err != nil {
		t.Fatalf("release by a user without channels: %v", err)
	}
	if err := <-got; err != nil {
		t.Fatalf("the polling waiter did not get the lock: %v", err)
	}
}
