package kubernetes

import (
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// record is the leader-election record of a Lease spec, as client-go's
// resourcelock.LeaseSpecToLeaderElectionRecord reads it.
type record struct {
	holder      string
	duration    time.Duration // leaseDurationSeconds
	acquire     time.Time
	renew       time.Time
	transitions int64
}

func recordOf(l *coordinationv1.Lease) record {
	var r record
	s := l.Spec
	if s.HolderIdentity != nil {
		r.holder = *s.HolderIdentity
	}
	if s.LeaseDurationSeconds != nil {
		r.duration = time.Duration(*s.LeaseDurationSeconds) * time.Second
	}
	if s.AcquireTime != nil {
		r.acquire = s.AcquireTime.Time
	}
	if s.RenewTime != nil {
		r.renew = s.RenewTime.Time
	}
	if s.LeaseTransitions != nil {
		r.transitions = int64(*s.LeaseTransitions)
	}
	return r
}

// setSpec writes r into l's spec as client-go's
// resourcelock.LeaderElectionRecordToLeaseSpec does (every field set, the
// holder "" when released), keeping preferredHolder and strategy.
func setSpec(l *coordinationv1.Lease, r record) {
	holder := r.holder
	secs := int32(r.duration / time.Second)
	trans := int32(r.transitions)
	l.Spec.HolderIdentity = &holder
	l.Spec.LeaseDurationSeconds = &secs
	l.Spec.AcquireTime = &metav1.MicroTime{Time: r.acquire}
	l.Spec.RenewTime = &metav1.MicroTime{Time: r.renew}
	l.Spec.LeaseTransitions = &trans
}

// seconds is d rounded up to whole seconds, at least one: a Lease's
// duration is whole seconds, and rounding up never shortens what others
// wait.
func seconds(d time.Duration) time.Duration {
	s := (d + time.Second - 1) / time.Second
	if s < 1 {
		s = 1
	}
	return s * time.Second
}

// observer keeps, per Lease, the last version this process read or wrote
// and when it first saw that version (this host's clock): client-go's
// observedRecord and observedTime, shared by every locker of a backend.
type observer struct {
	mu sync.Mutex
	m  map[string]observation
}

type observation struct {
	lease *coordinationv1.Lease // a copy, never changed
	since time.Time
}

func newObserver() *observer { return &observer{m: map[string]observation{}} }

func obsKey(ns, name string) string { return ns + "/" + name }

// note records l as seen at now and returns since when this process has
// seen that version unchanged.
func (o *observer) note(l *coordinationv1.Lease, now time.Time) time.Time {
	k := obsKey(l.Namespace, l.Name)
	o.mu.Lock()
	defer o.mu.Unlock()
	if prev, ok := o.m[k]; ok && prev.lease.ResourceVersion == l.ResourceVersion {
		return prev.since
	}
	o.m[k] = observation{lease: l.DeepCopy(), since: now}
	return now
}

// noteOwn records l, written by this process, as seen since the
// renewTime it wrote (this host's clock): the time its duration counts
// from for the writer itself.
func (o *observer) noteOwn(l *coordinationv1.Lease) {
	since := recordOf(l).renew
	if since.IsZero() {
		since = time.Now()
	}
	o.mu.Lock()
	o.m[obsKey(l.Namespace, l.Name)] = observation{lease: l.DeepCopy(), since: since}
	o.mu.Unlock()
}

// last is the version of ns/name this process saw last, and since when;
// nil when none.
func (o *observer) last(ns, name string) (*coordinationv1.Lease, time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	ob, ok := o.m[obsKey(ns, name)]
	if !ok {
		return nil, time.Time{}
	}
	return ob.lease.DeepCopy(), ob.since
}

// forget drops what this process saw of ns/name.
func (o *observer) forget(ns, name string) {
	o.mu.Lock()
	delete(o.m, obsKey(ns, name))
	o.mu.Unlock()
}

// judgement is what an observer concludes of a Lease at a moment.
type judgement struct {
	free  bool      // released (no holder) or expired
	until time.Time // when it expires at the earliest, on this host's clock (held only)
}

// judge applies client-go's rule (leaderelection.go, isLeaseValid): a
// Lease with a holder is valid until since (when this process first saw
// this version) plus its duration. A Lease whose renewTime plus its
// duration plus maxSkew has passed on this host's clock is expired too,
// for an observer that has not watched it that long.
func judge(r record, since, now time.Time, maxSkew time.Duration) judgement {
	if r.holder == "" {
		return judgement{free: true}
	}
	until := since.Add(r.duration)
	if !r.renew.IsZero() {
		if byRenew := r.renew.Add(r.duration + maxSkew); byRenew.Before(until) {
			until = byRenew
		}
	}
	return judgement{free: !until.After(now), until: until}
}
