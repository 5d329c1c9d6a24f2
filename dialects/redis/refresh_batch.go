package redis

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/schedlock/schedlock/dialects/internal/batch"
)

// RefreshWindow is the least time between two refresh pipelines of one
// Locker: refreshes that arrive while one is in flight, or within the
// window after it was sent, go together in the next pipeline (one round
// trip per node of a Cluster), each still its own script run with its own
// owner and token checks. A refresh that finds the Locker idle is sent at
// once, alone.
const RefreshWindow = 50 * time.Millisecond

// refreshCall is the script run that refreshes a lease, and its arguments.
type refreshCall struct {
	script *goredis.Script
	keys   []string
	args   []any
}

// refreshCall is s's refresh script with its arguments.
func (s *lease) refreshCall() refreshCall {
	keys, native := s.keys, s.locker.layout.native
	switch {
	case s.ident != "" && native:
		return refreshCall{refreshValue, keys, []any{s.ident, ms(s.atMost)}}
	case s.ident != "":
		return refreshCall{refreshExact, keys, []any{s.ident, ms(s.atMost)}}
	case native:
		return refreshCall{refreshNative, keys, []any{s.owner, strconv.FormatInt(s.token, 10), ms(s.atMost)}}
	}
	return refreshCall{refreshShedlock, keys, []any{s.owner, ms(s.atMost)}}
}

// refreshReply is what a refresh's script run answered.
type refreshReply struct {
	start time.Time // host time before it was sent
	res   any
	err   error
}

type refreshItem = batch.Item[refreshCall, refreshReply]

// refreshQueue gathers a Locker's refreshes (see RefreshWindow).
type refreshQueue struct {
	q     *batch.Queue[refreshCall, refreshReply]
	trips atomic.Int64 // round trips that carried refreshes
}

// sendRefreshes is the queue's send: one script run for a lone refresh,
// else one pipeline of EVALSHA runs, the scripts loaded first when this
// backend has not run them yet, and a run the server answers NOSCRIPT
// (restarted, flushed) sent again alone.
func (l *Locker) sendRefreshes(items []*refreshItem) {
	ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
	defer cancel()
	b := l.b
	l.refreshes.trips.Add(1)
	start := time.Now()
	if len(items) == 1 {
		c := items[0].Val
		res, err := b.runScript(ctx, c.script, c.keys, c.args...)
		items[0].Deliver(refreshReply{start, res, err})
		return
	}
	for _, it := range items {
		if _, ok := b.scripts.evaled.Load(it.Val.script); !ok {
			if err := b.loadScripts(ctx, it.Val.script); err != nil {
				for _, it := range items {
					it.Deliver(refreshReply{start, nil, err})
				}
				return
			}
			b.scripts.evaled.Store(it.Val.script, true)
		}
	}
	pipe := b.client.Pipeline()
	cmds := make([]*goredis.Cmd, len(items))
	for i, it := range items {
		cmds[i] = it.Val.script.EvalSha(ctx, pipe, it.Val.keys, it.Val.args...)
	}
	_, _ = pipe.Exec(ctx) // each command carries its own error
	for i, it := range items {
		res, err := cmds[i].Result()
		if err != nil && isNoScript(err) {
			c := it.Val
			res, err = b.runScript(ctx, c.script, c.keys, c.args...)
		} else if err != nil && isScriptingRefused(err) {
			err = b.refuseScripts(err)
		}
		it.Deliver(refreshReply{start, res, err})
	}
}

// refreshTimeout bounds a refresh pipeline.
const refreshTimeout = 30 * time.Second

// isNoScript reports a NOSCRIPT answer: the server does not have the
// script by its hash.
func isNoScript(err error) bool {
	var reply goredis.Error
	return errors.As(err, &reply) && len(reply.Error()) >= 8 && reply.Error()[:8] == "NOSCRIPT"
}

// RefreshStatements counts the round trips that carried lease refreshes:
// a lone script run or a pipeline (benchkit.RefreshCounter).
func (l *Locker) RefreshStatements() int64 { return l.refreshes.trips.Load() }

// PoolConnections reports the connections the client's pool has open and
// its limit (per node of a Cluster).
func (b *Backend) PoolConnections() (open, limit int) {
	return int(b.client.PoolStats().TotalConns), b.cfg.poolSize()
}
