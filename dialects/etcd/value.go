package etcd

import (
	"encoding/json"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// value is what schedlock writes into its lock key, as JSON:
//
//	{"owner":"host-a:4242","locked_at":"2026-01-02T03:04:05.678901234Z",
//	 "until":"2026-01-02T03:34:05.678901234Z","released":false}
//
// (times as encoding/json writes a time.Time: RFC 3339, up to nine
// fractional digits, trailing zeros dropped).
// locked_at and until are the holder's clock (etcd has no clock of its
// own to read); until is where the holder's lease ends unless refreshed
// (the server's lease, whose TTL is at-most rounded up, ends no earlier).
// released is true while a released lock is kept for its at-least. A key
// of the lock whose value is not this JSON (etcdctl lock writes an empty
// value) belongs to another client of concurrency.Mutex.
type value struct {
	Owner    string    `json:"owner"`
	LockedAt time.Time `json:"locked_at"`
	Until    time.Time `json:"until"`
	Released bool      `json:"released,omitempty"`
}

func (v value) encode() string {
	b, err := json.Marshal(v)
	if err != nil { // a struct of strings and times always marshals
		panic(err)
	}
	return string(b)
}

// decodeValue reads a schedlock value; ok is false for another client's.
func decodeValue(raw []byte) (value, bool) {
	var v value
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &v) != nil || v.Owner == "" {
		return value{}, false
	}
	return v, true
}

// ForeignOwner is the owner shown for a key of another concurrency.Mutex
// client (etcdctl lock): its lease, the only identity such a key has.
func ForeignOwner(lease clientv3.LeaseID) string { return fmt.Sprintf("etcd-lease:%x", int64(lease)) }
