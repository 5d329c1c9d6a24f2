package nats

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/schedlock/schedlock/dialects"
)

// ShedLock's NATS JetStream provider (NatsJetStreamLockProvider in
// lukas-krecan/ShedLock, providers/jetstream/shedlock-provider-jetstream,
// released in 7.2.0 and unchanged since) keeps every lock in one KV
// bucket, "shedlock-locks" unless its constructor names another; the key
// is the lock name itself, and the value is the lease end alone: epoch
// milliseconds on the writer's clock as 8 big-endian bytes. No owner, no
// lock time. It locks with Get, then Create when the key is absent or
// deleted, or Update guarded by the revision read when the lease end has
// passed on its clock; it never extends; it unlocks with Get, then, when
// the value is not later than its own lease end, Update guarded by the
// revision to lockAtLeastUntil while that is ahead, else Delete without
// a revision (a read-then-delete race: a holder whose lease ran out
// deletes its successor's key).
//
// The shedlock preset writes the same value to the same keys, so both
// exclude each other, and adds what ShedLock has no place for as message
// headers ShedLock never reads (Schedlock-Owner, Schedlock-Token,
// Schedlock-Locked-At): a key schedlock holds lists its owner and token,
// and its release is guarded by revision as every schedlock write is.
const (
	// ShedlockBucket is ShedLock's default bucket (BUCKET_NAME).
	ShedlockBucket = "shedlock-locks"

	hdrOwner    = "Schedlock-Owner"
	hdrToken    = "Schedlock-Token"
	hdrLockedAt = "Schedlock-Locked-At"

	// JetStream's and the KV API's headers.
	hdrExpectLastSubjSeq = "Nats-Expected-Last-Subject-Sequence"
	hdrKVOperation       = "KV-Operation"
)

// keyRE is a NATS KV key as the clients accept it (jnats and nats.go):
// ShedLock's lock names are keys as they are.
var keyRE = regexp.MustCompile(`^[-/_=.a-zA-Z0-9]+$`)

// shedlockKey is the key of name in ShedLock's layout: the name itself,
// refused (a *dialects.UnstorableNameError, ErrInvalid) when it is not a
// valid key, as ShedLock's client would refuse it.
func shedlockKey(name string) (string, error) {
	if !keyRE.MatchString(name) || name[0] == '.' || name[len(name)-1] == '.' {
		return "", &dialects.UnstorableNameError{Name: name, Table: "(ShedLock's NATS layout)",
			Why: "the layout uses the name as the NATS key, which takes letters, digits and - _ / = . (no dot first or last)"}
	}
	return name, nil
}

// shedOps is ShedLock's layout, written as stream messages on the
// bucket's subjects (what the KV API sends, with headers of ours).
type shedOps struct {
	js     jetstream.JetStream
	stream jetstream.Stream
	prefix string // "$KV.<bucket>."
}

func newShedOps(js jetstream.JetStream, stream jetstream.Stream, bucket string) *shedOps {
	return &shedOps{js: js, stream: stream, prefix: "$KV." + bucket + "."}
}

// decodeShed reads a stream message of ShedLock's layout.
func decodeShed(m *jetstream.RawStreamMsg, key string) (state, error) {
	if op := m.Header.Get(hdrKVOperation); op != "" && op != "PUT" {
		return state{revision: m.Sequence}, jetstream.ErrKeyDeleted
	}
	return decodeShedValue(key, m.Data, m.Header, m.Sequence, m.Time)
}

// decodeShedValue reads a value of ShedLock's layout and its headers.
func decodeShedValue(key string, data []byte, h natsgo.Header, seq uint64, written time.Time) (state, error) {
	if len(data) != 8 {
		return state{}, fmt.Errorf("key %q holds no ShedLock lock value (%d bytes, want 8): %w", key, len(data), errForeign)
	}
	s := state{revision: seq, written: written, hostTimes: true,
		until: time.UnixMilli(int64(binary.BigEndian.Uint64(data)))}
	s.v.Owner = h.Get(hdrOwner)
	s.v.LockedAt, _ = strconv.ParseInt(h.Get(hdrLockedAt), 10, 64)
	if s.v.LockedAt == 0 {
		s.v.LockedAt = written.UnixMilli() // ShedLock's own: the server's time of the write
	}
	s.token, _ = strconv.ParseUint(h.Get(hdrToken), 10, 64)
	if s.token == 0 {
		s.token = seq
	}
	s.v.Token = s.token
	s.v.LeaseMS = s.until.Sub(written).Milliseconds()
	return s, nil
}

func (o *shedOps) get(ctx context.Context, key string) (state, error) {
	m, err := o.stream.GetLastMsgForSubject(ctx, o.prefix+key)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return state{}, jetstream.ErrKeyNotFound
	}
	if err != nil {
		return state{}, err
	}
	return decodeShed(m, key)
}

// publish writes v's lease end to key under the expected revision.
func (o *shedOps) publish(ctx context.Context, key string, v value, rev uint64) (uint64, error) {
	until := time.Now().Add(time.Duration(v.LeaseMS) * time.Millisecond).UnixMilli()
	m := natsgo.NewMsg(o.prefix + key)
	m.Data = binary.BigEndian.AppendUint64(nil, uint64(until))
	m.Header.Set(hdrExpectLastSubjSeq, strconv.FormatUint(rev, 10))
	m.Header.Set(hdrOwner, v.Owner)
	m.Header.Set(hdrLockedAt, strconv.FormatInt(v.LockedAt, 10))
	if v.Token != 0 {
		m.Header.Set(hdrToken, strconv.FormatUint(v.Token, 10))
	}
	ack, err := o.js.PublishMsg(ctx, m)
	if err != nil {
		if wrongLastSeq(err) {
			return 0, fmt.Errorf("%w: %w", err, jetstream.ErrKeyRevisionMismatch)
		}
		return 0, err
	}
	return ack.Sequence, nil
}

func (o *shedOps) create(ctx context.Context, key string, v value) (uint64, error) {
	rev, err := o.publish(ctx, key, v, 0)
	if err == nil || !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return rev, err
	}
	cur, gerr := o.get(ctx, key)
	if errors.Is(gerr, jetstream.ErrKeyDeleted) {
		rev, err = o.publish(ctx, key, v, cur.revision)
	}
	if err != nil && errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return 0, fmt.Errorf("%w: %w", err, jetstream.ErrKeyExists)
	}
	return rev, err
}

func (o *shedOps) update(ctx context.Context, key string, v value, rev uint64) (uint64, error) {
	return o.publish(ctx, key, v, rev)
}

func (o *shedOps) del(ctx context.Context, key string, rev uint64) error {
	m := natsgo.NewMsg(o.prefix + key)
	m.Header.Set(hdrKVOperation, "DEL")
	m.Header.Set(hdrExpectLastSubjSeq, strconv.FormatUint(rev, 10))
	_, err := o.js.PublishMsg(ctx, m)
	if wrongLastSeq(err) {
		return fmt.Errorf("%w: %w", err, jetstream.ErrKeyRevisionMismatch)
	}
	return err
}
