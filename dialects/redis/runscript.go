package redis

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	goredis "github.com/redis/go-redis/v9"
)

// The lock scripts are loaded lazily: a backend sends a script's body
// with EVAL the first time it runs it (which also caches it on the
// server) and its hash with EVALSHA from then on, falling back to EVAL
// when a server answers NOSCRIPT (restarted, SCRIPT FLUSH, another
// Cluster node: go-redis's Script.Run). So opening a backend loads
// nothing, and `schedlock run` sends its acquire and release alone.

// scriptState is what a backend knows of its scripts on the server.
type scriptState struct {
	evaled sync.Map // *goredis.Script → true once sent by EVAL

	mu      sync.Mutex
	refused error // the ACL user may not run scripts (noScriptingError), or nil
}

// runScript runs s on the backend's client: EVAL the first time, then
// EVALSHA (EVAL on NOSCRIPT). A NOPERM for the scripting commands is the
// missing privilege (noScriptingError), remembered for the lockers and
// listings opened later.
func (b *Backend) runScript(ctx context.Context, s *goredis.Script, keys []string, args ...any) (any, error) {
	var cmd *goredis.Cmd
	if _, ok := b.scripts.evaled.Load(s); ok {
		cmd = s.Run(ctx, b.client, keys, args...)
	} else {
		cmd = s.Eval(ctx, b.client, keys, args...)
		var reply goredis.Error
		if err := cmd.Err(); err == nil || errors.As(err, &reply) {
			b.scripts.evaled.Store(s, true) // the server compiled it: cached there now
		}
	}
	res, err := cmd.Result()
	if err != nil && isScriptingRefused(err) {
		return res, b.refuseScripts(err)
	}
	return res, err
}

// isScriptingRefused reports a NOPERM answer to a scripting command.
func isScriptingRefused(err error) bool {
	if !isNoPermission(err) {
		return false
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "'eval") || strings.Contains(msg, "'script")
}

// refuseScripts records the refusal err and returns its missing
// privilege.
func (b *Backend) refuseScripts(err error) error {
	b.scripts.mu.Lock()
	defer b.scripts.mu.Unlock()
	if b.scripts.refused == nil {
		b.scripts.refused = noScriptingError(b.cfg.options().user, err)
	}
	return b.scripts.refused
}

// scriptsRefused is the missing scripting privilege, when Redis refused
// a script of this backend's; nil otherwise.
func (b *Backend) scriptsRefused() error {
	b.scripts.mu.Lock()
	defer b.scripts.mu.Unlock()
	return b.scripts.refused
}

// loadScripts loads ss (on every master of a Cluster), for a pipeline
// that runs them by hash (listing). A refused load is the missing
// privilege.
func (b *Backend) loadScripts(ctx context.Context, ss ...*goredis.Script) error {
	load := func(ctx context.Context, c goredis.Scripter) error {
		for _, s := range ss {
			if err := s.Load(ctx, c).Err(); err != nil {
				if isScriptingRefused(err) {
					return b.refuseScripts(err)
				}
				return fmt.Errorf("load the lock scripts: %w", err)
			}
		}
		return nil
	}
	if cc, ok := b.client.(*goredis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, func(ctx context.Context, n *goredis.Client) error { return load(ctx, n) })
	}
	return load(ctx, b.client)
}
