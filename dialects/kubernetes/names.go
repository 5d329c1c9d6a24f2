package kubernetes

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/schedlock/schedlock/dialects"
)

// MaxLeaseName is the longest Lease name Kubernetes accepts (an object
// name is a DNS subdomain: RFC 1123, at most 253 characters).
const MaxLeaseName = 253

// escaped is the prefix of every Lease name leaseName had to escape, and
// hashed that of a name too long to escape; a lock name that is a valid
// Lease name by itself but starts with either is escaped too, so the
// mapping stays reversible.
const (
	escaped = "x-"
	hashed  = "y-"
)

// NameAnnotation is the annotation on a Lease whose name is hashed: the
// lock name in full.
const NameAnnotation = "schedlock.io/lock-name"

// leaseName maps a lock name to its Lease name. A name that already is a
// valid Lease name (lower-case letters, digits, "-" and ".", starting and
// ending with a letter or digit, no empty dot-separated part, at most 253
// characters) and does not start with "x-" is its own Lease name, so
// `kubectl get lease NAME` and client-go's elections use the same names.
// Any other name becomes "x-" followed by the name with every byte outside
// a-z and 0-9 written as "-" and two lower-case hex digits ("Nightly_Job"
// is "x--4eightly-5f-4aob"), reversed by lockName. A name whose escaped
// form would pass 253 characters becomes "y-" and the 64 hex digits of its
// SHA-256, and its Lease carries the name in the annotation
// NameAnnotation. Only what dialects.CheckName refuses is refused.
func leaseName(name string) (string, error) {
	if err := dialects.CheckName(name); err != nil {
		return "", err
	}
	if validObjectName(name) && !strings.HasPrefix(name, escaped) && !strings.HasPrefix(name, hashed) {
		return name, nil
	}
	var b strings.Builder
	b.WriteString(escaped)
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "-%02x", c)
	}
	if b.Len() > MaxLeaseName {
		sum := sha256.Sum256([]byte(name))
		return hashed + hex.EncodeToString(sum[:]), nil
	}
	return b.String(), nil
}

// isHashed reports whether leaseName hashed name (its Lease needs
// NameAnnotation).
func isHashed(lease string) bool { return strings.HasPrefix(lease, hashed) }

// lockNameOf is the lock name of a Lease: its NameAnnotation when hashed,
// else lockName of its name.
func lockNameOf(name string, annotations map[string]string) string {
	if n := annotations[NameAnnotation]; n != "" && isHashed(name) {
		return n
	}
	return lockName(name)
}

// lockName is the lock name of a Lease called lease: the lease name
// itself unless leaseName escaped it.
func lockName(lease string) string {
	rest, ok := strings.CutPrefix(lease, escaped)
	if !ok {
		return lease
	}
	var b strings.Builder
	for i := 0; i < len(rest); i++ {
		if rest[i] != '-' {
			b.WriteByte(rest[i])
			continue
		}
		if i+2 >= len(rest) {
			return lease // not written by leaseName: the Lease's own name
		}
		v, err := strconv.ParseUint(rest[i+1:i+3], 16, 8)
		if err != nil {
			return lease
		}
		b.WriteByte(byte(v))
		i += 2
	}
	return b.String()
}

// validObjectName reports whether s is a DNS subdomain as Kubernetes
// validates object names (apimachinery's IsDNS1123Subdomain): at most 253
// characters of a-z, 0-9, "-" and ".", each dot-separated part non-empty
// and starting and ending with a letter or digit.
func validObjectName(s string) bool {
	if s == "" || len(s) > MaxLeaseName {
		return false
	}
	for _, part := range strings.Split(s, ".") {
		if !validLabel(part, len(s)) {
			return false
		}
	}
	return true
}

// validLabel reports whether s is a DNS label of at most max characters.
func validLabel(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
	for i := 0; i < len(s); i++ {
		if !alnum(s[i]) && s[i] != '-' {
			return false
		}
	}
	return alnum(s[0]) && alnum(s[len(s)-1])
}

// validNamespace reports whether s is a namespace name: a DNS label of at
// most 63 characters.
func validNamespace(s string) bool { return validLabel(s, 63) }
