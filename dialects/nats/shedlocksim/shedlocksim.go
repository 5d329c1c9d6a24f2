// Package shedlocksim is a ShedLock node for tests: it sends exactly the
// KV operations of ShedLock's NATS JetStream provider
// (NatsJetStreamLockProvider in lukas-krecan/ShedLock,
// providers/jetstream/shedlock-provider-jetstream), through nats.go's KV
// API where ShedLock goes through jnats' (the two send the same
// JetStream requests for get, create, update and delete), so tests can
// prove that schedlock's shedlock preset and a ShedLock application
// exclude each other on one bucket.
//
// What ShedLock sends (ShedLock @ 2495b140, as released since 7.2.0):
//
//   - its bucket: "shedlock-locks" unless the constructor names another,
//     created when missing with memory storage and the KV defaults
//     (history 1, no TTL);
//   - lock: Get(name) — the lock name is the key; absent or deleted:
//     Create(name, lockUntil); present: when lockUntil is after now, not
//     locked, else Update(name, lockUntil, revision read). lockUntil is
//     lockAtMostUntil, epoch milliseconds of the application's clock as
//     8 big-endian bytes; a wrong-last-sequence answer is "not locked";
//   - no extend (the provider is not extensible);
//   - unlock: Get(name); absent: done; a value after its own
//     lockAtMostUntil: another holder's, done; lockAtLeastUntil still
//     ahead: Update(name, lockAtLeastUntil, revision read); else
//     Delete(name) with no revision check.
//
// This package is imported by tests only.
package shedlocksim

import (
	"context"
	"encoding/binary"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// DefaultBucket is ShedLock's BUCKET_NAME.
const DefaultBucket = "shedlock-locks"

// Bucket opens name (DefaultBucket when ""), creating it as ShedLock's
// constructor does when it is missing: memory storage, KV defaults.
func Bucket(ctx context.Context, js jetstream.JetStream, name string) (jetstream.KeyValue, error) {
	if name == "" {
		name = DefaultBucket
	}
	kv, err := js.KeyValue(ctx, name)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: name, Storage: jetstream.MemoryStorage})
	}
	return kv, err
}

// Node is one ShedLock application's lock provider on a bucket.
type Node struct {
	KV jetstream.KeyValue
	// Now stands for ClockProvider.now(); nil is time.Now.
	Now func() time.Time
}

// Lock is a lock the node holds: its LockConfiguration's name and
// instants.
type Lock struct {
	Name                              string
	LockAtMostUntil, LockAtLeastUntil time.Time
}

func (n Node) now() time.Time {
	if n.Now != nil {
		return n.Now()
	}
	return time.Now()
}

// Value is the value ShedLock writes for the lease end t.
func Value(t time.Time) []byte { return binary.BigEndian.AppendUint64(nil, uint64(t.UnixMilli())) }

// Until reads a value ShedLock wrote.
func Until(v []byte) time.Time { return time.UnixMilli(int64(binary.BigEndian.Uint64(v))) }

// get is getEntry: jnats' get answers null for an absent key and for a
// delete or purge marker.
func (n Node) get(ctx context.Context, name string) (jetstream.KeyValueEntry, error) {
	e, err := n.KV.Get(ctx, name)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return nil, nil
	}
	return e, err
}

// Lock is lock(): ok is false when another holds name.
func (n Node) Lock(ctx context.Context, name string, atMost, atLeast time.Duration) (l Lock, ok bool, err error) {
	now := n.now()
	l = Lock{Name: name, LockAtMostUntil: now.Add(atMost), LockAtLeastUntil: now.Add(atLeast)}
	e, err := n.get(ctx, name)
	if err != nil {
		return Lock{}, false, err
	}
	if e == nil {
		_, err = n.KV.Create(ctx, name, Value(l.LockAtMostUntil))
	} else {
		if Until(e.Value()).After(n.now()) {
			return Lock{}, false, nil
		}
		_, err = n.KV.Update(ctx, name, Value(l.LockAtMostUntil), e.Revision())
	}
	if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return Lock{}, false, nil
	}
	if err != nil {
		return Lock{}, false, err
	}
	return l, true, nil
}

// Unlock is unlock().
func (n Node) Unlock(ctx context.Context, l Lock) error {
	e, err := n.get(ctx, l.Name)
	if err != nil || e == nil {
		return err
	}
	if Until(e.Value()).After(l.LockAtMostUntil) {
		return nil // updated by another process
	}
	if l.LockAtLeastUntil.After(n.now()) {
		_, err = n.KV.Update(ctx, l.Name, Value(l.LockAtLeastUntil), e.Revision())
		return err
	}
	return n.KV.Delete(ctx, l.Name)
}
