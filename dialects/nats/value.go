package nats

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/schedlock/schedlock/dialects"
)

// value is a lock key's value: who holds it, since when (the acquiring
// host's clock, epoch millis), and for how long after the server's
// timestamp of this write (LeaseMS). Token is the revision of the acquire
// write, 0 in that write itself (its own revision is the token).
type value struct {
	Owner    string `json:"owner"`
	LockedAt int64  `json:"locked_at"`
	LeaseMS  int64  `json:"lease_ms"`
	Token    uint64 `json:"token,omitempty"`
}

func (v value) encode() []byte {
	b, _ := json.Marshal(v)
	return b
}

// state is a read key: its value, revision, token and lease end.
type state struct {
	v        value
	revision uint64
	token    uint64
	until    time.Time // the server's write time plus LeaseMS (ShedLock's layout: the lease end written)
	written  time.Time // the server's time of the write
	// hostTimes: until is a writer's host clock (ShedLock's layout), not
	// the server's.
	hostTimes bool
}

// decode reads an entry; a value that is not schedlock's is errForeign.
func decode(e jetstream.KeyValueEntry) (state, error) {
	return decodeValue(e.Bucket(), e.Key(), e.Value(), e.Revision(), e.Created())
}

// decodeValue reads the value of key written at revision rev at the
// server's time written.
func decodeValue(bucket, key string, data []byte, rev uint64, written time.Time) (state, error) {
	var v value
	if err := json.Unmarshal(data, &v); err != nil || v.Owner == "" {
		return state{}, fmt.Errorf("key %q of bucket %s holds no schedlock lock value (%d bytes): %w", key, bucket, len(data), errForeign)
	}
	s := state{v: v, revision: rev, token: v.Token, written: written}
	if s.token == 0 {
		s.token = rev
	}
	s.until = leaseEnd(written, v.LeaseMS)
	return s, nil
}

// row is the lease row of s for the lock name, read at now; serverNow
// says now is the server's clock (else this host's).
func (s state) row(name string, now time.Time, serverNow bool) dialects.Row {
	return dialects.Row{Name: name, Owner: s.v.Owner, Token: int64(s.token), HasToken: true,
		LockedAt: time.UnixMilli(s.v.LockedAt).UTC(), Until: s.until.UTC(), DBNow: now.UTC(), HostTimes: s.hostTimes || !serverNow}
}
