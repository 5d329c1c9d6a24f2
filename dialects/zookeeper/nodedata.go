package zookeeper

import (
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-zookeeper/zk"
)

// toolName marks schedlock's own lock nodes in their data.
const toolName = "schedlock"

// holderData is the data of a schedlock lock node.
type holderData struct {
	Tool    string `json:"tool"`
	Owner   string `json:"owner"`
	AtMost  int64  `json:"at_most_ms"`
	AtLeast int64  `json:"at_least_ms,omitempty"`
	// LockedAt is the server time (ms) the lock was granted to a node that
	// waited in the queue first, or for the last holder's at-least to end;
	// 0 means the node's creation time.
	LockedAt int64 `json:"locked_at_ms,omitempty"`
}

func (d holderData) bytes() []byte {
	b, _ := json.Marshal(d)
	return b
}

// atLeastData is the data of the at-least node a release leaves behind.
type atLeastData struct {
	Tool     string `json:"tool"`
	Owner    string `json:"owner"`
	Token    int64  `json:"token"`
	LockedAt int64  `json:"locked_at_ms"`
	Until    int64  `json:"until_ms"`
}

func (d atLeastData) bytes() []byte {
	b, _ := json.Marshal(d)
	return b
}

// node is one lock node as read: who holds it and its lease.
type node struct {
	lockNode
	stat      zk.Stat
	schedlock bool   // written by schedlock (else: Curator or another client)
	owner     string // the owner, or the data of a foreign node as text
	data      holderData
}

// readNode interprets a lock node's data and stat.
func readNode(n lockNode, data []byte, stat *zk.Stat) node {
	out := node{lockNode: n, stat: *stat}
	var d holderData
	if json.Unmarshal(data, &d) == nil && d.Tool == toolName && d.Owner != "" {
		out.schedlock, out.owner, out.data = true, d.Owner, d
		return out
	}
	out.owner = foreignOwner(data)
	return out
}

// foreignOwner shows the data of a node schedlock did not write: as text
// when it is printable UTF-8 (Curator writes the client's IP address),
// else as hex; a node without data is shown by its session.
func foreignOwner(data []byte) string {
	if len(data) == 0 {
		return ""
	}
	s := string(data)
	if utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7F }) < 0 {
		return s
	}
	return "0x" + hex.EncodeToString(data)
}

// lockedAt is when the node's holder got the lock, on the server clock.
func (n node) lockedAt() time.Time {
	if n.schedlock && n.data.LockedAt > 0 {
		return msTime(n.data.LockedAt)
	}
	return msTime(n.stat.Ctime)
}

// until is the end of a schedlock node's lease: its last write plus
// at-most, on the server clock. ok is false for a foreign node, which has
// no lease (it holds while its session lives).
func (n node) until() (time.Time, bool) {
	if !n.schedlock {
		return time.Time{}, false
	}
	return msTime(n.stat.Mtime).Add(time.Duration(n.data.AtMost) * time.Millisecond), true
}

// holderName is how the node's holder is named in a refusal: its owner,
// else its session.
func (n node) holderName() string {
	if n.owner != "" {
		return n.owner
	}
	return sessionName(n.stat.EphemeralOwner)
}

// sessionName formats a session id as ZooKeeper's tools do (0x…).
func sessionName(id int64) string {
	return "session 0x" + strings.TrimLeft(hex.EncodeToString([]byte{byte(id >> 56), byte(id >> 48), byte(id >> 40), byte(id >> 32), byte(id >> 24), byte(id >> 16), byte(id >> 8), byte(id)}), "0")
}

func msTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
