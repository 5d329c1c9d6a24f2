package zookeeper

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// EncodeName maps a lock name to the node name it is kept under, one
// path segment that ZooKeeper accepts. It is deterministic and reversed
// by DecodeName. Every byte of a character ZooKeeper treats specially is
// written %XX (upper-case hex of its UTF-8 bytes):
//
//   - "%" itself and "/" (the path separator);
//   - control characters U+0001–U+001F and U+007F–U+009F;
//   - U+E000–U+F8FF and U+FFF0–U+FFFF, which ZooKeeper refuses;
//   - characters above U+FFFF (emoji and others that Java keeps as a
//     surrogate pair, which ZooKeeper refuses in a path);
//   - the names "." and "..", whose dots are written %2E.
//
// Every other character, spaces included, is kept as it is, so the node
// of "nightly-report" is "nightly-report" and a Curator client can lock
// the same path by its plain name.
func EncodeName(name string) string {
	if name == "." || name == ".." {
		return strings.Repeat("%2E", len(name))
	}
	if !needsEscape(name) {
		return name
	}
	var b strings.Builder
	for _, r := range name {
		if !escaped(r) {
			b.WriteRune(r)
			continue
		}
		var buf [utf8.UTFMax]byte
		n := utf8.EncodeRune(buf[:], r)
		for _, c := range buf[:n] {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func needsEscape(name string) bool {
	for _, r := range name {
		if escaped(r) {
			return true
		}
	}
	return false
}

// escaped reports whether r is written %XX in a node name.
func escaped(r rune) bool {
	switch {
	case r == '%', r == '/':
		return true
	case r > 0 && r <= 0x1F, r >= 0x7F && r <= 0x9F:
		return true
	case r >= 0xD800 && r <= 0xF8FF, r >= 0xFFF0:
		return true
	}
	return false
}

// DecodeName reverses EncodeName. A node name that EncodeName cannot
// have produced (a stray % or bytes that are not UTF-8) is returned as it
// is, with ok false.
func DecodeName(node string) (name string, ok bool) {
	if !strings.Contains(node, "%") {
		return node, true
	}
	var b []byte
	for i := 0; i < len(node); i++ {
		if node[i] != '%' {
			b = append(b, node[i])
			continue
		}
		if i+2 >= len(node) {
			return node, false
		}
		v, err := strconv.ParseUint(node[i+1:i+3], 16, 8)
		if err != nil {
			return node, false
		}
		b = append(b, byte(v))
		i += 2
	}
	if !utf8.Valid(b) {
		return node, false
	}
	return string(b), true
}

// Node names inside a lock name's node.
const (
	// protectedPrefix starts the name of a lock node created in Curator's
	// protected mode: "_c_" + a UUID + "-" (Curator's ProtectedUtils).
	protectedPrefix = "_c_"
	// lockPrefix is InterProcessMutex's lock name ("lock-", its LOCK_NAME):
	// the sequence follows it.
	lockPrefix = "lock-"
	// atLeastNode keeps a released lock until its at-least ends. Its name
	// has no "lock-", so Curator sorts it after every lock node and never
	// takes it for a holder.
	atLeastNode = "at-least"
)

// lockNode is one child of a lock name's node that is a lock node.
type lockNode struct {
	name string // the child's name
	seq  int64  // its sequence number
}

// parseLockNode reads a child name as Curator's InterProcessMutex does
// (StandardLockInternalsDriver.fixForSorting): the part after the last
// "lock-" is the sequence. Children without it are not lock nodes.
func parseLockNode(child string) (lockNode, bool) {
	i := strings.LastIndex(child, lockPrefix)
	if i < 0 {
		return lockNode{}, false
	}
	digits := child[i+len(lockPrefix):]
	if digits == "" {
		return lockNode{}, false
	}
	seq, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return lockNode{}, false
	}
	return lockNode{name: child, seq: seq}, true
}

// sortedLockNodes returns the lock nodes among children, in Curator's
// order: by the text after "lock-" (ten zero-padded digits, so by
// sequence).
func sortedLockNodes(children []string) []lockNode {
	var out []lockNode
	for _, c := range children {
		if n, ok := parseLockNode(c); ok {
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].name[strings.LastIndex(out[i].name, lockPrefix)+len(lockPrefix):], out[j].name[strings.LastIndex(out[j].name, lockPrefix)+len(lockPrefix):]
		return a < b
	})
	return out
}

// joinPath joins a parent path ("" for the root) and a child name.
func joinPath(parent, child string) string { return parent + "/" + child }
