package lock

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/schedlock/schedlock/internal/livetest"
)

// The library on Redis: lock.Open with a redis:// DSN picks the lease
// strategy, WithLock runs the function under the lock with a growing
// fencing token, and a second holder is refused meanwhile.
func TestOpenRedis(t *testing.T) {
	dsn := livetest.DSN(t, livetest.Redis)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	db, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.Info().Dialect != "redis" || db.Strategy() != StrategyTable {
		t.Fatalf("opened %+v with strategy %s", db.Info(), db.Strategy())
	}
	name := "lock-redis-" + NewOwner()
	defer dropRedisKeys(t, dsn, "schedlock:{"+name+"}", "schedlock:{"+name+"}:token")
	var tokens []int64
	for range 2 {
		err := WithLock(ctx, db, name, Options{AtMost: time.Minute}, func(ctx context.Context, lease Lease) error {
			tok, ok := lease.Token()
			if !ok {
				return errors.New("no fencing token on Redis")
			}
			tokens = append(tokens, tok)
			_, err := db.Acquire(ctx, name, Options{AtMost: time.Minute})
			if !errors.Is(err, ErrHeld) {
				return errors.New("a second holder was not refused: " + errString(err))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(tokens) != 2 || tokens[1] <= tokens[0] {
		t.Errorf("tokens %v, want growing", tokens)
	}
}

// dropRedisKeys deletes what a test left: the fencing-token counters stay
// after a release by design.
func dropRedisKeys(t *testing.T, dsn string, keys ...string) {
	opts, err := goredis.ParseURL(dsn)
	if err != nil {
		t.Fatal(err)
	}
	c := goredis.NewClient(opts)
	defer c.Close()
	if err := c.Del(context.Background(), keys...).Err(); err != nil {
		t.Error(err)
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// A Redis without persistence (the tests' throwaway one) can hand a lock
// to two holders: Open reports the risk once — to OnRisk when given, else
// as one slog warning on slog.Default() — and opens all the same. A
// SQLite file reports nothing.
func TestOpenReportsRisksOfTwoHolders(t *testing.T) {
	dsn := livetest.DSN(t, livetest.Redis)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	var got []Risk
	db, err := Open(ctx, dsn, OnRisk(func(r Risk) { got = append(got, r) }))
	if err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	if len(got) != 1 || got[0].ID != "no-persistence" || got[0].Remedy == "" {
		t.Errorf("OnRisk got %+v, want no-persistence once, with its remedy", got)
	}

	var buf bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(&buf, nil)))
	db, err = Open(ctx, dsn)
	slog.SetDefault(prev)
	if err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var rec struct{ Level, Msg, Risk, Remedy string }
	if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &rec) != nil ||
		rec.Level != "WARN" || rec.Risk != "no-persistence" || !strings.Contains(rec.Msg, "two holders") || rec.Remedy == "" {
		t.Errorf("slog records %q: want one warning naming no-persistence and its remedy", buf.String())
	}

	got = nil
	db, err = Open(ctx, filepath.Join(t.TempDir(), "locks.db")+"?x-strategy=table&x-create-file=true", OnRisk(func(r Risk) { got = append(got, r) }))
	if err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	if len(got) != 0 {
		t.Errorf("SQLite reported %+v, want no risk", got)
	}
}
