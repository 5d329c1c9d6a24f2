package kubernetes

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedlock/schedlock/dialects"
)

var (
	_ dialects.LockLister  = (*Backend)(nil)
	_ dialects.LockBreaker = (*Backend)(nil)
)

// ListLocks implements dialects.LockLister: one list request per
// namespace (the backend's, or those opts.Tables name; on k8s://* one
// request across every namespace), every Lease in it
// with its holder, whoever wrote it: schedlock's locks and the leader
// elections of controllers and client-go programs alike (kube-system's
// kube-scheduler, a node's heartbeat Lease). A Lease without a holder is a
// free lock (listed with All); a held one is expired once this process
// judges it so (see judge).
func (b *Backend) ListLocks(ctx context.Context, opts dialects.ListOptions) (*dialects.Listing, error) {
	if err := opts.CheckNames(); err != nil {
		return nil, err
	}
	listing := &dialects.Listing{Locks: []dialects.LockEntry{}, Tables: []dialects.Table{}}
	if opts.Strategy == dialects.StrategySession {
		return listing, nil
	}
	lockers := []*Locker{{b: b, ns: b.ns}}
	if len(opts.Tables) > 0 {
		lockers = lockers[:0]
		for _, t := range opts.Tables {
			if t.Name == "" && t.Preset == "" {
				lockers = append(lockers, &Locker{b: b, ns: b.ns}) // the known tables: the DSN's namespace
				continue
			}
			l, err := b.LeaseLocker(t)
			if err != nil {
				return nil, err
			}
			lockers = append(lockers, l.(*Locker))
		}
	}
	seen := map[string]bool{}
	for _, l := range lockers {
		if seen[l.ns+"\x00"+l.prefix] {
			continue
		}
		seen[l.ns+"\x00"+l.prefix] = true
		list, err := b.leaseAPI(l.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			what := "list the Leases of namespace " + l.ns
			if l.ns == "" {
				what = "list the Leases of every namespace"
			}
			return nil, dialects.Wrap(Name, "list", b.requestErr(what, err))
		}
		source := l.ns
		if l.prefix != "" {
			source = strings.TrimSuffix(l.prefix, "/")
		}
		if l.ns == "" { // every namespace (k8s://*): each one a source
			for _, ns := range namespacesOf(list.Items) {
				listing.Tables = append(listing.Tables, dialects.Table{Preset: dialects.PresetSchedlock, Name: ns})
			}
		} else {
			listing.Tables = append(listing.Tables, dialects.Table{Preset: dialects.PresetSchedlock, Name: source})
		}
		now := time.Now()
		for i := range list.Items {
			e := b.entry(&list.Items[i], now)
			if l.prefix != "" {
				name, ok := strings.CutPrefix(e.Name, l.prefix)
				if !ok {
					continue
				}
				e.Name, e.Source = name, source
			}
			if opts.Keeps(e) {
				listing.Locks = append(listing.Locks, e)
			}
		}
	}
	sort.Slice(listing.Locks, func(i, j int) bool {
		a, c := listing.Locks[i], listing.Locks[j]
		if a.Name != c.Name {
			return a.Name < c.Name
		}
		return a.Source < c.Source
	})
	listing.Notes = append(listing.Notes, fmt.Sprintf("every Lease is listed, leader elections of controllers included; expiry is judged on this host's clock (unchanged for its duration, or renewTime plus duration plus %s)", b.cfg.maxSkew))
	return listing, nil
}

// namespacesOf is the namespaces of leases, sorted, each once.
func namespacesOf(leases []coordinationv1.Lease) []string {
	var out []string
	for _, l := range leases {
		if !slices.Contains(out, l.Namespace) {
			out = append(out, l.Namespace)
		}
	}
	sort.Strings(out)
	return out
}

// entry is the listing entry of a Lease read at now.
func (b *Backend) entry(l *coordinationv1.Lease, now time.Time) dialects.LockEntry {
	r := recordOf(l)
	since := b.seen.note(l, now)
	e := dialects.LockEntry{Name: lockNameOf(l.Name, l.Annotations), Owner: r.holder, Token: r.transitions, HasToken: true,
		DBNow: now.UTC(), Strategy: dialects.StrategyTable, Source: l.Namespace, Preset: dialects.PresetSchedlock}
	if e.Name != l.Name {
		e.Key = l.Name
	}
	if !r.acquire.IsZero() {
		e.LockedAt = r.acquire.UTC()
	}
	j := judge(r, since, now, b.cfg.maxSkew)
	switch {
	case r.holder == "":
		e.State = dialects.StateFree
	case j.free:
		e.State, e.Until = dialects.StateExpired, j.until.UTC()
	default:
		e.State, e.Until = dialects.StateHeld, j.until.UTC()
		if _, paused := dialects.PausedBy(r.holder); paused {
			e.State = dialects.StatePaused
		}
	}
	return e
}

// FindLock implements dialects.LockLister: the Lease of the lock called
// name (in the backend's namespace, or in tables' namespaces).
func (b *Backend) FindLock(ctx context.Context, name string, tables []dialects.Table) (*dialects.Listing, error) {
	if _, err := leaseName(name); err != nil {
		return nil, err
	}
	if b.cfg.every && len(tables) == 0 {
		return nil, errEveryNamespace
	}
	listing, err := b.ListLocks(ctx, dialects.ListOptions{Tables: tables, All: true})
	if err != nil {
		return nil, err
	}
	listing.Locks = dialects.KeepNamed(listing.Locks, name)
	return listing, nil
}

// Liquibase implements dialects.LockBreaker: Kubernetes has no Liquibase
// table.
func (b *Backend) Liquibase(string) (dialects.LiquibaseLock, error) {
	return nil, fmt.Errorf("%w: Kubernetes has no Liquibase lock table", dialects.ErrUnsupported)
}

// LockAdmin implements dialects.LockBreaker: nil, Kubernetes has no
// session locks.
func (b *Backend) LockAdmin() dialects.LockAdmin { return nil }
