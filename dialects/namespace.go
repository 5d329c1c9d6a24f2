package dialects

import (
	"context"
	"strings"
	"unicode/utf8"
)

// Namespaces separate environments (production, staging, a developer's
// laptop) that share one database or server, as ShedLock's practice of an
// environment prefix in the lock name does: the lock called NAME in
// namespace NS is stored, on every strategy and backend, as the lock name
// NS + NamespaceSeparator + NAME ("staging::nightly-report"). That stored
// name then goes through the backend's usual mapping (MySQL's database
// scope and 64-character limit, PostgreSQL's advisory-key hash, a lease
// table's column width), so two namespaces never share a lock and one
// namespace is the same lock on every node.
//
// A namespace follows CheckName's rules, holds no ':' (so the first
// NamespaceSeparator of a stored name always ends its namespace) and none
// of the glob characters * ? [ ] \ (so "NS::*" selects a namespace's
// locks in a listing), and is at
// most MaxNamespaceRunes characters, which leaves a lease table's
// 64-character name column room for the name. The empty namespace is no
// namespace: names are stored as given.
//
// A lock taken without a namespace under a name that holds "::"
// ("a::b") is the lock "b" of namespace "a": listings show it so.

// NamespaceSeparator ends the namespace in a stored lock name.
const NamespaceSeparator = "::"

// namespaceForbidden are the characters a namespace may not hold.
const namespaceForbidden = `:*?[]\`

// MaxNamespaceRunes is the longest namespace, in characters.
const MaxNamespaceRunes = 32

// CheckNamespace returns an error matching ErrInvalid for a namespace no
// lock may have; "" (no namespace) is valid.
func CheckNamespace(ns string) error {
	if ns == "" {
		return nil
	}
	if why := badText(ns); why != "" {
		return invalidf("namespace %s: give a namespace of printable UTF-8 text, e.g. staging", why)
	}
	if i := strings.IndexAny(ns, namespaceForbidden); i >= 0 {
		return invalidf("namespace %q holds %q: a namespace holds none of %s (':' separates it from the name, the others are glob characters); use e.g. staging or eu-prod", ns, ns[i:i+1], namespaceForbidden)
	}
	if n := utf8.RuneCountInString(ns); n > MaxNamespaceRunes {
		return invalidf("namespace is %d characters, at most %d are allowed", n, MaxNamespaceRunes)
	}
	return nil
}

// NamespacedName is the stored lock name of the lock called name in
// namespace ns: name itself when ns is empty.
func NamespacedName(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + NamespaceSeparator + name
}

// SplitNamespace reverses NamespacedName: the namespace and the name of a
// stored lock name ("" and stored when it holds no NamespaceSeparator, or
// when what precedes it is no valid namespace).
func SplitNamespace(stored string) (ns, name string) {
	before, after, ok := strings.Cut(stored, NamespaceSeparator)
	if !ok || before == "" || after == "" || CheckNamespace(before) != nil {
		return "", stored
	}
	return before, after
}

// WithNamespace returns a Locker that takes the lock called name as
// locker's lock NamespacedName(ns, name); its leases report the name the
// caller gave. An empty ns returns locker itself. Options such as
// ApplyPartitionBound must be applied to locker before it is wrapped.
func WithNamespace(locker Locker, ns string) Locker {
	if ns == "" {
		return locker
	}
	return &namespacedLocker{Locker: locker, ns: ns}
}

type namespacedLocker struct {
	Locker
	ns string
}

// Acquire implements Locker.
func (l *namespacedLocker) Acquire(ctx context.Context, name string, opts Options) (Lease, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	if err := CheckNamespace(l.ns); err != nil {
		return nil, err
	}
	lease, err := l.Locker.Acquire(ctx, NamespacedName(l.ns, name), opts)
	if err != nil {
		return nil, err
	}
	return &namespacedLease{Lease: lease, name: name}, nil
}

type namespacedLease struct {
	Lease
	name string
}

// Name is the name the caller gave, without the namespace.
func (l *namespacedLease) Name() string { return l.name }

// Unwrap returns the backend's lease.
func (l *namespacedLease) Unwrap() Lease { return l.Lease }

// ApplyNamespace fills every entry's Namespace from its stored Name and,
// when ns is not empty, keeps only the entries of namespace ns. Names are
// then given without their namespace. Entries known only by a key (no
// Name) belong to no namespace. An entry whose Namespace the backend set
// (its table keeps the namespace, see PlaceNamespace) is kept as it is.
func ApplyNamespace(entries []LockEntry, ns string) []LockEntry {
	out := entries[:0:0]
	for _, e := range entries {
		if e.Namespace == "" {
			e.Namespace, e.Name = SplitNamespace(e.Name)
			if e.Name == "" {
				e.Namespace = ""
			}
		}
		if ns != "" && e.Namespace != ns {
			continue
		}
		out = append(out, e)
	}
	return out
}

// NamespacePatterns turns the name globs of a listing in namespace ns into
// globs on stored names: each pattern prefixed with the namespace, or
// "NS::*" when there is none. An empty ns returns patterns.
func NamespacePatterns(ns string, patterns []string) []string {
	if ns == "" {
		return patterns
	}
	if len(patterns) == 0 {
		return []string{NamespacedName(ns, "*")}
	}
	out := make([]string, len(patterns))
	for i, p := range patterns {
		out[i] = NamespacedName(ns, p)
	}
	return out
}

// PlaceNamespace says where namespace ns of the locks of table t lives on
// the backend d (its registry entry): in the table, when d's layout for t
// has a place of its own for a namespace (Dialect.NamespaceTable) — it
// returns that table and "" left for the lock names — or, as everywhere
// else, in the lock names: t and ns unchanged. An empty ns, or a nil d,
// changes nothing. Errors match ErrInvalid.
func PlaceNamespace(d *Dialect, t Table, ns string) (Table, string, error) {
	if ns == "" || d == nil || d.NamespaceTable == nil {
		return t, ns, nil
	}
	if err := CheckNamespace(ns); err != nil {
		return t, ns, err
	}
	placed, ok, err := d.NamespaceTable(t, ns)
	switch {
	case err != nil:
		return t, ns, err
	case !ok:
		return t, ns, nil
	}
	return placed, "", nil
}
