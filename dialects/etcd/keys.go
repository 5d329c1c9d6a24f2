package etcd

import (
	"fmt"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/schedlock/schedlock/dialects"
)

// The key layout is concurrency.Mutex's, the one `etcdctl lock` uses: the
// lock called NAME under the lock-space prefix P is the set of keys
// P + escape(NAME) + "/" + <lease id in lower-case hex>, each bound to its
// lease; the key with the lowest create revision holds the lock, the others
// wait. schedlock creates its key only when no key of the lock exists, so
// it never queues: it holds or is refused.

// DefaultTable is the table name that means the lock space of the DSN
// prefix itself (the preset's default name, which Table.Schema fills in
// when no name is given).
const DefaultTable = dialects.PresetSchedlock

// space is one lock space: every lock key under it starts with base.
type space struct {
	// base is the DSN prefix ("jobs/", or "" for the root), followed by
	// "<table>%/" for a table other than DefaultTable.
	base string
	// table is the table name the space was opened as.
	table string
}

// newSpace returns the lock space of table in the DSN prefix root.
func newSpace(root, table string) space {
	if table == "" || table == DefaultTable {
		return space{base: root, table: DefaultTable}
	}
	return space{base: root + table + tableMark + "/", table: table}
}

// tableMark ends the path segment of a table other than DefaultTable. No
// segment EscapeName makes ends with a bare "%", so a table's keys never
// fall under the prefix of a lock of the DSN prefix's own space (the lock
// "staging" and the table "staging" stay apart).
const tableMark = "%"

// lockPrefix is the prefix of every key of the lock called name: what
// `etcdctl lock` must be given (without the trailing slash) to share it.
func (s space) lockPrefix(name string) string { return s.base + EscapeName(name) + "/" }

// lockKey is the key of name bound to lease.
func (s space) lockKey(name string, lease clientv3.LeaseID) string {
	return s.lockPrefix(name) + leaseHex(lease)
}

func leaseHex(id clientv3.LeaseID) string { return fmt.Sprintf("%x", int64(id)) }

// EscapeName maps a lock name to its key segment: "%" becomes "%25" and "/"
// becomes "%2F", so that no name's keys fall under another name's prefix
// ("a" and "a/b" stay distinct locks). Every other byte is kept. The
// mapping is deterministic and reversed by UnescapeName.
func EscapeName(name string) string {
	if !strings.ContainsAny(name, "%/") {
		return name
	}
	var b strings.Builder
	b.Grow(len(name) + 8)
	for i := 0; i < len(name); i++ {
		switch c := name[i]; c {
		case '%':
			b.WriteString("%25")
		case '/':
			b.WriteString("%2F")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// UnescapeName reverses EscapeName; ok is false for a segment EscapeName
// cannot have made (a "%" not followed by 25 or 2F).
func UnescapeName(seg string) (string, bool) {
	if !strings.Contains(seg, "%") {
		return seg, true
	}
	var b strings.Builder
	for i := 0; i < len(seg); i++ {
		if seg[i] != '%' {
			b.WriteByte(seg[i])
			continue
		}
		switch {
		case strings.HasPrefix(seg[i:], "%25"):
			b.WriteByte('%')
		case strings.HasPrefix(seg[i:], "%2F"):
			b.WriteByte('/')
		default:
			return "", false
		}
		i += 2
	}
	return b.String(), true
}

// parsedKey is a lock key split into its parts.
type parsedKey struct {
	table string // DefaultTable for a key right under the DSN prefix
	name  string
	lease clientv3.LeaseID
}

// parseKey splits key (under root) into table, name and lease; ok is false
// for a key that is not a lock key of this layout.
func parseKey(root, key string) (parsedKey, bool) {
	rest, found := strings.CutPrefix(key, root)
	if !found {
		return parsedKey{}, false
	}
	parts := strings.Split(rest, "/")
	var p parsedKey
	switch len(parts) {
	case 2:
		p.table = DefaultTable
	case 3:
		table, marked := strings.CutSuffix(parts[0], tableMark)
		if !marked || table == "" || table == DefaultTable || strings.Contains(table, "%") {
			return parsedKey{}, false
		}
		p.table = table
		parts = parts[1:]
	default:
		return parsedKey{}, false
	}
	name, ok := UnescapeName(parts[0])
	if !ok || name == "" {
		return parsedKey{}, false
	}
	id, err := strconv.ParseInt(parts[1], 16, 64)
	if err != nil || id == 0 || leaseHex(clientv3.LeaseID(id)) != parts[1] {
		return parsedKey{}, false
	}
	p.name, p.lease = name, clientv3.LeaseID(id)
	return p, true
}
