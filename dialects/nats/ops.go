package nats

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ops are one key layout's reads and writes of a lock key: the schedlock
// layout (JSON values through the KV API) or ShedLock's (an 8-byte lease
// end, written as stream messages that carry schedlock's owner in
// headers). Absent keys are jetstream.ErrKeyNotFound, deleted ones
// jetstream.ErrKeyDeleted; a failed create is jetstream.ErrKeyExists and
// a failed guard jetstream.ErrKeyRevisionMismatch.
type ops interface {
	// get reads key: its state, or errForeign for a value the layout
	// did not write.
	get(ctx context.Context, key string) (state, error)
	// create writes v only where key is absent or deleted.
	create(ctx context.Context, key string, v value) (uint64, error)
	// update writes v only while key's revision is rev.
	update(ctx context.Context, key string, v value, rev uint64) (uint64, error)
	// del deletes key only while its revision is rev.
	del(ctx context.Context, key string, rev uint64) error
}

// errForeign marks a key whose value the layout cannot read.
var errForeign = errors.New("not a lock value of this layout")

// kvOps is the schedlock layout on the KV API.
type kvOps struct{ kv jetstream.KeyValue }

func (o kvOps) get(ctx context.Context, key string) (state, error) {
	e, err := o.kv.Get(ctx, key)
	if err != nil {
		return state{}, err
	}
	return decode(e)
}

func (o kvOps) create(ctx context.Context, key string, v value) (uint64, error) {
	return o.kv.Create(ctx, key, v.encode())
}

func (o kvOps) update(ctx context.Context, key string, v value, rev uint64) (uint64, error) {
	return o.kv.Update(ctx, key, v.encode(), rev)
}

func (o kvOps) del(ctx context.Context, key string, rev uint64) error {
	return o.kv.Delete(ctx, key, jetstream.LastRevision(rev))
}

// absent reports whether err says a key is not there (never written, or
// deleted).
func absent(err error) bool {
	return errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted)
}

// conflict reports whether err is a failed create or revision guard.
func conflict(err error) bool {
	return errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) || wrongLastSeq(err)
}

// wrongLastSeq reports whether err is JetStream's "wrong last sequence"
// (10071, or 10164 from a replicated stream).
func wrongLastSeq(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) && (api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// leaseEnd is the end of a lease of ms milliseconds from t.
func leaseEnd(t time.Time, ms int64) time.Time { return t.Add(time.Duration(ms) * time.Millisecond) }
