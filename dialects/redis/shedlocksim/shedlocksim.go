// Package shedlocksim is a ShedLock node for tests: it sends exactly the
// Redis commands of ShedLock's Redis lock providers (RedisLockProvider for
// Spring, JedisLockProvider, LettuceLockProvider — all through
// InternalRedisLockProvider in providers/redis/shedlock-support-redis),
// so tests can prove that schedlock's shedlock preset and a ShedLock
// application exclude each other on one Redis.
//
// What ShedLock sends (ShedLock @ 2495b140):
//
//   - lock: SET <keyPrefix>:<environment>:<name> "ADDED:<instant>@<host>:<uuid>" NX PX <lockAtMostFor in ms>
//     — the key built as String.format("%s:%s:%s", keyPrefix, env, name),
//     keyPrefix "job-lock" and environment "default" unless the builder's
//     keyPrefix(…) / environment(…) say otherwise; the instant as
//     Utils.toIsoString writes it (UTC, three fraction digits, a Z), the
//     host as Utils.getHostname, a random UUID;
//   - extend, and unlock before lockAtLeastFor has passed: SET key value XX
//     PX <ms left>, or with safeUpdate its updLuaScript (GET, compare,
//     PEXPIRE) by EVAL;
//   - unlock after lockAtLeastFor: DEL key, or with safeUpdate its
//     delLuaScript (GET, compare, DEL) by EVAL.
//
// Nothing else: no TIME, no token, the instant and the lease computed on
// the application's clock. This package is imported by tests only.
package shedlocksim

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// ShedLock's defaults (InternalRedisLockProvider.DEFAULT_KEY_PREFIX and
// ENV_DEFAULT).
const (
	DefaultKeyPrefix   = "job-lock"
	DefaultEnvironment = "default"
)

// ShedLock's scripts (InternalRedisLockProvider.delLuaScript and
// updLuaScript), sent by EVAL when safeUpdate is on.
const (
	delLuaScript = `
        if redis.call("get",KEYS[1]) == ARGV[1] then
            return redis.call("del",KEYS[1])
        else
            return 0
        end
        `
	updLuaScript = `
        if redis.call('get', KEYS[1]) == ARGV[1] then
           return redis.call('pexpire', KEYS[1], ARGV[2])
        else
           return 0
        end
        `
)

// Node is one ShedLock application's lock provider.
type Node struct {
	Client goredis.UniversalClient
	// KeyPrefix is the builder's keyPrefix(…); "" is ShedLock's default.
	KeyPrefix string
	// Environment is the builder's environment(…); "" is ShedLock's
	// default.
	Environment string
	// SafeUpdate is the builder's safeUpdate(true): extend and unlock by
	// script, under a value check.
	SafeUpdate bool
	// Host stands for Utils.getHostname(); "" is this host's name.
	Host string
}

// Lock is a lock the node holds: its key and the value it wrote.
type Lock struct {
	Key, Value string
}

// Key is the key of the lock called name, as InternalRedisLockProvider's
// buildKey makes it.
func (n Node) Key(name string) string {
	prefix, env := n.KeyPrefix, n.Environment
	if prefix == "" {
		prefix = DefaultKeyPrefix
	}
	if env == "" {
		env = DefaultEnvironment
	}
	return fmt.Sprintf("%s:%s:%s", prefix, env, name)
}

// value is buildValue: "ADDED:<instant>@<host>:<uuid>".
func (n Node) value() string {
	host := n.Host
	if host == "" {
		host, _ = os.Hostname()
	}
	return fmt.Sprintf("ADDED:%s@%s:%s", time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), host, uuid4())
}

// Lock is lock(): SET key value NX PX atMost. ok is false when another
// holds the key.
func (n Node) Lock(ctx context.Context, name string, atMost time.Duration) (l Lock, ok bool, err error) {
	l = Lock{Key: n.Key(name), Value: n.value()}
	err = n.Client.Do(ctx, "SET", l.Key, l.Value, "NX", "PX", atMost.Milliseconds()).Err()
	if errors.Is(err, goredis.Nil) {
		return Lock{}, false, nil
	}
	if err != nil {
		return Lock{}, false, err
	}
	return l, true, nil
}

// Extend is extend() (and an unlock within lockAtLeastFor):
// setKeyExpiration to ms from now. ok is false when the key is gone (or,
// with SafeUpdate, holds another value).
func (n Node) Extend(ctx context.Context, l Lock, ms time.Duration) (ok bool, err error) {
	if n.SafeUpdate {
		res, err := n.Client.Eval(ctx, updLuaScript, []string{l.Key}, l.Value, fmt.Sprint(ms.Milliseconds())).Int64()
		return res == 1, err
	}
	err = n.Client.Do(ctx, "SET", l.Key, l.Value, "XX", "PX", ms.Milliseconds()).Err()
	if errors.Is(err, goredis.Nil) {
		return false, nil
	}
	return err == nil, err
}

// Unlock is doUnlock() with keepFor the time left of lockAtLeastFor: the
// key's expiry set to it when it is positive, else the key deleted (DEL,
// or with SafeUpdate delLuaScript).
func (n Node) Unlock(ctx context.Context, l Lock, keepFor time.Duration) error {
	if keepFor.Milliseconds() > 0 {
		_, err := n.Extend(ctx, l, keepFor)
		return err
	}
	if n.SafeUpdate {
		return n.Client.Eval(ctx, delLuaScript, []string{l.Key}, l.Value).Err()
	}
	return n.Client.Del(ctx, l.Key).Err()
}

// uuid4 is UUID.randomUUID().toString(): version 4, variant 2, lower-case
// hex in 8-4-4-4-12.
func uuid4() string {
	var u [16]byte
	_, _ = rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}
