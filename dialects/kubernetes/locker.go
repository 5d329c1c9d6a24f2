package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedlock/schedlock/dialects"
)

// Locker is the lease locker on one namespace. It implements
// dialects.LeaseLocker.
type Locker struct {
	b      *Backend
	ns     string
	prefix string // "TABLE/" for a table name that is not a namespace name
	schema dialects.Schema
}

// leaseName is the Lease name of the lock called name in this locker.
func (l *Locker) leaseName(name string) (string, error) {
	if err := dialects.CheckName(name); err != nil {
		return "", err
	}
	return leaseName(l.prefix + name)
}

var _ dialects.LeaseLocker = (*Locker)(nil)

// Strategy reports StrategyTable.
func (l *Locker) Strategy() dialects.Strategy { return dialects.StrategyTable }

// Schema implements dialects.LeaseLocker.
func (l *Locker) Schema() dialects.Schema { return l.schema }

// Namespace is the namespace of the locker's Leases.
func (l *Locker) Namespace() string { return l.ns }

func (l *Locker) leases() leaseClient { return l.b.leaseAPI(l.ns) }

// unavailable tells a server that is down for now from other failures.
func unavailable(err error) bool {
	var u *dialects.UnreachableError
	return errors.As(err, &u)
}

// Acquire implements dialects.Locker.
func (l *Locker) Acquire(ctx context.Context, name string, opts dialects.Options) (dialects.Lease, error) {
	lname, err := l.leaseName(name)
	if err != nil {
		return nil, err
	}
	opts, err = opts.Normalize()
	if err != nil {
		return nil, err
	}
	lease, err := dialects.RetryAcquire(ctx, opts, func() (dialects.Lease, error) { return l.try(ctx, name, lname, opts) }, unavailable)
	return lease, dialects.Wrap(Name, "acquire", err)
}

// get reads the Lease lname, noting it as seen; nil when there is none.
func (l *Locker) get(ctx context.Context, lname string) (*coordinationv1.Lease, time.Time, error) {
	cur, err := l.leases().Get(ctx, lname, metav1.GetOptions{})
	now := time.Now()
	if apierrors.IsNotFound(err) {
		l.b.seen.forget(l.ns, lname)
		return nil, now, nil
	}
	if err != nil {
		return nil, now, l.b.requestErr("read Lease "+l.ns+"/"+lname, err)
	}
	return cur, l.b.seen.note(cur, now), nil
}

func (l *Locker) try(ctx context.Context, name, lname string, opts dialects.Options) (dialects.Lease, error) {
	// The version this process saw last, when it was free then or has
	// been seen unchanged for its duration, is updated directly under its
	// resourceVersion: one request (client-go's fast path does the same).
	if last, since := l.b.seen.last(l.ns, lname); last != nil && judge(recordOf(last), since, time.Now(), l.b.cfg.maxSkew).free {
		s, err := l.take(ctx, name, last, opts)
		if err == nil || !apierrors.IsConflict(errors.Unwrap(err)) && !apierrors.IsNotFound(errors.Unwrap(err)) {
			return s, err
		}
	}
	cur, since, err := l.get(ctx, lname)
	if err != nil {
		return nil, err
	}
	if cur == nil {
		return l.create(ctx, name, lname, opts)
	}
	r := recordOf(cur)
	if j := judge(r, since, time.Now(), l.b.cfg.maxSkew); !j.free {
		return nil, &dialects.HeldError{Name: name, Holder: r.holder, Until: j.until}
	}
	s, err := l.take(ctx, name, cur, opts)
	if err != nil && (apierrors.IsConflict(errors.Unwrap(err)) || apierrors.IsNotFound(errors.Unwrap(err))) {
		return nil, &dialects.HeldError{Name: name} // written meanwhile: the next try reads it again
	}
	return s, err
}

// requestFailed wraps a failed write so that errors.Unwrap gives the API
// error (a conflict is told apart by the caller).
type requestFailed struct {
	err  error // the API error
	full error // as requestErr classified it
}

func (e *requestFailed) Error() string { return e.full.Error() }
func (e *requestFailed) Unwrap() error { return e.err }

// Is lets errors.Is see through to the classified error (unreachable,
// privilege).
func (e *requestFailed) Is(target error) bool { return errors.Is(e.full, target) }

// As lets errors.As find the classified error's types.
func (e *requestFailed) As(target any) bool { return errors.As(e.full, target) }

func (l *Locker) failed(op string, err error) error {
	return &requestFailed{err: err, full: l.b.requestErr(op, err)}
}

// create creates the Lease of a lock that has none: leaseTransitions 1.
func (l *Locker) create(ctx context.Context, name, lname string, opts dialects.Options) (dialects.Lease, error) {
	start := time.Now()
	obj := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: lname, Namespace: l.ns}}
	if isHashed(lname) {
		obj.Annotations = map[string]string{NameAnnotation: l.prefix + name}
	}
	setSpec(obj, record{holder: opts.Owner, duration: seconds(opts.AtMost), acquire: start, renew: start, transitions: 1})
	out, err := l.leases().Create(ctx, obj, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil, &dialects.HeldError{Name: name} // created meanwhile: the next try reads it
	}
	if err != nil {
		return nil, l.failed("create Lease "+l.ns+"/"+lname, err)
	}
	return l.started(name, out, start, opts)
}

// take writes this process's acquire over cur (free or expired): one
// update under cur's resourceVersion, leaseTransitions one more.
func (l *Locker) take(ctx context.Context, name string, cur *coordinationv1.Lease, opts dialects.Options) (dialects.Lease, error) {
	start := time.Now()
	obj := cur.DeepCopy()
	setSpec(obj, record{holder: opts.Owner, duration: seconds(opts.AtMost), acquire: start, renew: start, transitions: recordOf(cur).transitions + 1})
	out, err := l.leases().Update(ctx, obj, metav1.UpdateOptions{})
	if err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			l.b.seen.forget(l.ns, cur.Name)
		}
		return nil, l.failed("update Lease "+l.ns+"/"+cur.Name, err)
	}
	return l.started(name, out, start, opts)
}

// started is the lease of an acquire write that succeeded at start.
func (l *Locker) started(name string, out *coordinationv1.Lease, start time.Time, opts dialects.Options) (dialects.Lease, error) {
	l.b.seen.noteOwn(out)
	s := &lease{l: l, name: name, lease: out.Name, owner: opts.Owner, token: recordOf(out).transitions, obj: out,
		lockedAt: start, atMost: opts.AtMost, atLeast: opts.AtLeast, until: start.Add(opts.AtMost), done: make(chan struct{})}
	if !l.b.leases.Track(s) {
		return nil, fmt.Errorf("%w: the backend is closed", dialects.ErrLeaseLost)
	}
	s.timer = time.AfterFunc(opts.AtMost, s.expire)
	return s, nil
}

// Inspect implements dialects.LeaseLocker: the Lease's holder, token
// (leaseTransitions), acquireTime and expiry as this process judges it.
// A Lease without a holder is a free lock (found false).
func (l *Locker) Inspect(ctx context.Context, name string) (dialects.Row, bool, error) {
	lname, err := l.leaseName(name)
	if err != nil {
		return dialects.Row{}, false, err
	}
	cur, since, err := l.get(ctx, lname)
	if err != nil || cur == nil {
		return dialects.Row{}, false, dialects.Wrap(Name, "inspect", err)
	}
	r := recordOf(cur)
	if r.holder == "" {
		return dialects.Row{}, false, nil
	}
	now := time.Now()
	j := judge(r, since, now, l.b.cfg.maxSkew)
	return dialects.Row{Name: name, Owner: r.holder, Token: r.transitions, HasToken: true,
		LockedAt: r.acquire.UTC(), Until: j.until.UTC(), DBNow: now.UTC(), HostTimes: true}, true, nil
}

// Handle implements dialects.LeaseLocker.
func (l *Locker) Handle(name, owner string, token int64, opts dialects.Options) (dialects.Lease, error) {
	opts, err := dialects.HandleOptions(name, owner, token, opts)
	if err != nil {
		return nil, err
	}
	lname, err := l.leaseName(name)
	if err != nil {
		return nil, err
	}
	return &lease{l: l, name: name, lease: lname, owner: owner, token: token, atMost: opts.AtMost,
		atLeast: opts.AtLeast, handle: true, done: make(chan struct{})}, nil
}

// Expire implements dialects.LeaseLocker (unlock --force): it empties the
// holder of a Lease that is still held, under the resourceVersion read,
// as client-go's release does. It reports whether it did.
func (l *Locker) Expire(ctx context.Context, name string) (bool, error) {
	lname, err := l.leaseName(name)
	if err != nil {
		return false, err
	}
	for {
		cur, since, err := l.get(ctx, lname)
		if err != nil || cur == nil {
			return false, dialects.Wrap(Name, "expire", err)
		}
		r := recordOf(cur)
		if judge(r, since, time.Now(), l.b.cfg.maxSkew).free {
			return false, nil
		}
		obj := cur.DeepCopy()
		now := time.Now()
		setSpec(obj, record{duration: time.Second, acquire: now, renew: now, transitions: r.transitions})
		out, err := l.leases().Update(ctx, obj, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			continue // written meanwhile: judge again
		}
		if err != nil {
			return false, dialects.Wrap(Name, "expire", l.b.requestErr("update Lease "+l.ns+"/"+lname, err))
		}
		l.b.seen.noteOwn(out)
		l.b.endLocal(l.ns, lname, "", fmt.Errorf("%w: lock %q was force-released", dialects.ErrLeaseLost, name))
		return true, nil
	}
}
