package nats

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
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
	until    time.Time // the server's write time plus LeaseMS
}

// decode reads an entry; a value that is not schedlock's is an error.
func decode(e jetstream.KeyValueEntry) (state, error) {
	var v value
	if err := json.Unmarshal(e.Value(), &v); err != nil || v.Owner == "" {
		return state{}, fmt.Errorf("key %q of bucket %s holds no schedlock lock value (%d bytes)", e.Key(), e.Bucket(), len(e.Value()))
	}
	s := state{v: v, revision: e.Revision(), token: v.Token}
	if s.token == 0 {
		s.token = e.Revision()
	}
	s.until = e.Created().Add(time.Duration(v.LeaseMS) * time.Millisecond)
	return s, nil
}
