package redis_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/schedlock/schedlock/dialects"
)

// shedlockNode sends exactly the commands of ShedLock's Redis provider
// (providers/redis/shedlock-support-redis, InternalRedisLockProvider):
// SET job-lock:<env>:<name> "ADDED:<instant>@<host>:<uuid>" NX PX <ms>
// to take, and its delLuaScript (safeUpdate) to release.
type shedlockNode struct {
	c   *goredis.Client
	env string
}

const shedlockDelLua = `
        if redis.call("get",KEYS[1]) == ARGV[1] then
            return redis.call("del",KEYS[1])
        else
            return 0
        end
        `

func (n shedlockNode) lock(ctx context.Context, name string, atMost time.Duration) (string, bool, error) {
	var u [16]byte
	_, _ = rand.Read(u[:])
	host, _ := os.Hostname()
	value := fmt.Sprintf("ADDED:%s@%s:%s", time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), host, hex.EncodeToString(u[:]))
	err := n.c.Do(ctx, "SET", "job-lock:"+n.env+":"+name, value, "NX", "PX", atMost.Milliseconds()).Err()
	if errors.Is(err, goredis.Nil) {
		return "", false, nil
	}
	return value, err == nil, err
}

func (n shedlockNode) unlock(ctx context.Context, name, value string) error {
	return n.c.Eval(ctx, shedlockDelLua, []string{"job-lock:" + n.env + ":" + name}, value).Err()
}

// TestShedlockPresetExcludesShedLock races the shedlock preset against a
// node sending ShedLock's exact commands on one name: in every round both
// try at once, the winner holds a short critical section, and an overlap
// detector counts the holders inside it. Both must win rounds, and never
// two at a time.
func TestShedlockPresetExcludesShedLock(t *testing.T) {
	b := openLive(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	env := "race_" + hex.EncodeToString([]byte(dialects.NewOwner()))[:12]
	l, err := b.Locker(dialects.StrategyTable, dialects.Table{Preset: dialects.PresetShedlock, Name: env})
	if err != nil {
		t.Fatal(err)
	}
	opts, err := goredis.ParseURL(liveDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	node := shedlockNode{c: goredis.NewClient(opts), env: env}
	defer node.c.Close()

	const rounds = 300
	var inside, doubles, schedlockWins, shedlockWins atomic.Int64
	critical := func(wins *atomic.Int64) {
		if inside.Add(1) > 1 {
			doubles.Add(1)
		}
		wins.Add(1)
		time.Sleep(200 * time.Microsecond)
		inside.Add(-1)
	}
	for round := range rounds {
		name := fmt.Sprintf("job-%d", round%7)
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make(chan error, 2)
		wg.Go(func() {
			<-start
			lease, err := l.Acquire(ctx, name, dialects.Options{AtMost: 10 * time.Second, Owner: "schedlock-node"})
			if errors.Is(err, dialects.ErrHeld) {
				return
			}
			if err != nil {
				errs <- err
				return
			}
			critical(&schedlockWins)
			if err := lease.Release(ctx); err != nil {
				errs <- err
			}
		})
		wg.Go(func() {
			<-start
			value, ok, err := node.lock(ctx, name, 10*time.Second)
			if err != nil || !ok {
				if err != nil {
					errs <- err
				}
				return
			}
			critical(&shedlockWins)
			if err := node.unlock(ctx, name, value); err != nil {
				errs <- err
			}
		})
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	if d := doubles.Load(); d != 0 {
		t.Fatalf("%d double holds in %d rounds", d, rounds)
	}
	if schedlockWins.Load() == 0 || shedlockWins.Load() == 0 {
		t.Fatalf("schedlock won %d rounds, ShedLock %d: want both to win some", schedlockWins.Load(), shedlockWins.Load())
	}
	t.Logf("%d rounds: schedlock held %d times, ShedLock %d times, 0 double holds", rounds, schedlockWins.Load(), shedlockWins.Load())
	if n, _, err := node.c.Scan(ctx, 0, "job-lock:"+env+":*", 1000).Result(); err != nil || len(n) != 0 {
		t.Errorf("keys left behind: %v %v", n, err)
	}
}
