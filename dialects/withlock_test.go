package dialects

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// memLocker is an in-memory Locker for testing WithLock's lifecycle.
type memLocker struct {
	mu    sync.Mutex
	held  map[string]*memLease
	fails map[string]bool // names whose next Refresh reports a lost lease
}

func newMemLocker() *memLocker {
	return &memLocker{held: map[string]*memLease{}, fails: map[string]bool{}}
}

func (m *memLocker) Strategy() Strategy { return StrategyTable }

func (m *memLocker) Acquire(_ context.Context, name string, opts Options) (Lease, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.held[name]; ok {
		return nil, &HeldError{Name: name, Holder: l.owner}
	}
	l := &memLease{m: m, name: name, owner: opts.Owner, done: make(chan struct{})}
	m.held[name] = l
	return l, nil
}

type memLease struct {
	m           *memLocker
	name, owner string
	refreshes   int
	released    bool
	err         error
	done        chan struct{}
}

func (l *memLease) Name() string          { return l.name }
func (l *memLease) Owner() string         { return l.owner }
func (l *memLease) Token() (int64, bool)  { return 0, false }
func (l *memLease) Until() time.Time      { return time.Time{} }
func (l *memLease) Done() <-chan struct{} { return l.done }
func (l *memLease) Err() error {
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	return l.err
}

func (l *memLease) Refresh(context.Context) error {
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	l.refreshes++
	if l.m.fails[l.name] && l.err == nil {
		l.err = fmt.Errorf("%w: taken over", ErrLeaseLost)
		delete(l.m.held, l.name)
		close(l.done)
	}
	return l.err
}

func (l *memLease) Release(context.Context) error {
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	if l.err != nil {
		return l.err
	}
	if l.released {
		return ErrLeaseLost
	}
	l.released = true
	delete(l.m.held, l.name)
	close(l.done)
	return nil
}

func TestWithLockRunsAndReleases(t *testing.T) {
	m := newMemLocker()
	ran := false
	err := WithLock(context.Background(), m, "job", Options{}, func(ctx context.Context, lease Lease) error {
		ran = true
		if _, err := m.Acquire(ctx, "job", Options{}); !errors.Is(err, ErrHeld) {
			t.Errorf("second acquire inside fn: got %v, want ErrHeld", err)
		}
		return nil
	})
	if err != nil || !ran {
		t.Fatalf("WithLock: err=%v ran=%v", err, ran)
	}
	if _, ok := m.held["job"]; ok {
		t.Fatal("lock still held after WithLock returned")
	}
}

func TestWithLockHeldSkipsFn(t *testing.T) {
	m := newMemLocker()
	if _, err := m.Acquire(context.Background(), "job", Options{Owner: "other"}); err != nil {
		t.Fatal(err)
	}
	err := WithLock(context.Background(), m, "job", Options{}, func(context.Context, Lease) error {
		t.Error("fn ran although the lock was held")
		return nil
	})
	var held *HeldError
	if !errors.As(err, &held) || held.Holder != "other" {
		t.Fatalf("got %v, want HeldError naming other", err)
	}
}

func TestWithLockCancelsOnLoss(t *testing.T) {
	m := newMemLocker()
	m.fails["job"] = true
	fnErr := errors.New("stopped")
	start := time.Now()
	err := WithLock(context.Background(), m, "job", Options{AtMost: 90 * time.Millisecond}, func(ctx context.Context, _ Lease) error {
		select {
		case <-ctx.Done():
			if !errors.Is(context.Cause(ctx), ErrLeaseLost) {
				t.Errorf("cause = %v, want ErrLeaseLost", context.Cause(ctx))
			}
			return fnErr
		case <-time.After(5 * time.Second):
			t.Error("fn context not cancelled after the lease was lost")
			return nil
		}
	})
	if !errors.Is(err, ErrLeaseLost) || !errors.Is(err, fnErr) {
		t.Fatalf("got %v, want both the lease loss and fn's error", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("loss noticed after %s, want about AtMost/3", d)
	}
}

// hangLocker's leases never answer a Refresh: a database that went silent.
type hangLocker struct{ memLocker }

func (h *hangLocker) Acquire(ctx context.Context, name string, opts Options) (Lease, error) {
	l, err := h.memLocker.Acquire(ctx, name, opts)
	if err != nil {
		return nil, err
	}
	return &hangLease{memLease: l.(*memLease), refreshing: make(chan struct{}, 1)}, nil
}

type hangLease struct {
	*memLease
	refreshing chan struct{}
}

func (l *hangLease) Refresh(ctx context.Context) error {
	l.refreshing <- struct{}{}
	<-ctx.Done()
	return ctx.Err()
}

// A refresh hanging when fn returns is abandoned: the release follows at
// once instead of after the refresh's timeout (AtMost/3).
func TestWithLockDoesNotWaitForHangingRefresh(t *testing.T) {
	h := &hangLocker{*newMemLocker()}
	var returned time.Time
	err := WithLock(context.Background(), h, "job", Options{AtMost: 3 * time.Second}, func(ctx context.Context, lease Lease) error {
		<-lease.(*hangLease).refreshing // the first refresh, at 1s, now hangs
		returned = time.Now()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(returned); d > 500*time.Millisecond {
		t.Fatalf("WithLock returned %s after fn, waiting for the hanging refresh", d)
	}
	if _, ok := h.held["job"]; ok {
		t.Fatal("lock still held after WithLock returned")
	}
}

func TestWithLockRejectsBadOptions(t *testing.T) {
	err := WithLock(context.Background(), newMemLocker(), "job", Options{AtMost: time.Second, AtLeast: 2 * time.Second}, func(context.Context, Lease) error { return nil })
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("got %v, want ErrInvalid", err)
	}
	err = WithLock(context.Background(), newMemLocker(), "", Options{}, func(context.Context, Lease) error { return nil })
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("empty name: got %v, want ErrInvalid", err)
	}
}

func TestMapName(t *testing.T) {
	long := string(make([]rune, 0))
	for i := 0; i < 100; i++ {
		long += "é"
	}
	got := MapName(long, 64)
	if n := len([]rune(got)); n != 64 {
		t.Fatalf("mapped to %d runes, want 64", n)
	}
	if MapName(long, 64) != got {
		t.Fatal("mapping is not deterministic")
	}
	if MapName(long+"x", 64) == got {
		t.Fatal("two long names with a shared prefix collide")
	}
	if MapName("short", 64) != "short" {
		t.Fatal("a name that fits must stay unchanged")
	}
}

func FuzzMapName(f *testing.F) {
	f.Add("a", 17)
	f.Add("日本語 ключ 🔒 with a long tail that goes on and on and on and on", 20)
	f.Fuzz(func(t *testing.T, name string, max int) {
		if max < 17 || max > 4096 {
			return
		}
		got := MapName(name, max)
		if n := len([]rune(got)); n > max {
			t.Fatalf("MapName(%q, %d) = %d runes", name, max, n)
		}
		if got != MapName(name, max) {
			t.Fatal("not deterministic")
		}
	})
}

func TestOptionsNormalize(t *testing.T) {
	for _, o := range []Options{{AtMost: -1}, {AtLeast: -1}, {Wait: -1}, {AtMost: time.Second, AtLeast: time.Minute}} {
		if _, err := o.Normalize(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: got %v, want ErrInvalid", o, err)
		}
	}
	o, err := Options{}.Normalize()
	if err != nil || o.AtMost != DefaultAtMost || o.Owner == "" || o.RetryEvery != DefaultRetryEvery {
		t.Fatalf("defaults: %+v %v", o, err)
	}
}

// A job that releases its lease itself, cleanly, is no error, and its
// context is not cancelled by the release.
func TestWithLockJobReleasesItself(t *testing.T) {
	m := newMemLocker()
	var after error
	err := WithLock(context.Background(), m, "job", Options{AtMost: 90 * time.Millisecond}, func(ctx context.Context, lease Lease) error {
		if err := lease.Release(ctx); err != nil {
			return err
		}
		select {
		case <-ctx.Done(): // the keep-alive must not take a release for a loss
		case <-time.After(200 * time.Millisecond): // two refresh intervals
		}
		after = context.Cause(ctx)
		return nil
	})
	if err != nil {
		t.Fatalf("WithLock after the job released the lease itself: %v", err)
	}
	if after != nil {
		t.Fatalf("the job's context was cancelled after its own release: %v", after)
	}
	if _, ok := m.held["job"]; ok {
		t.Fatal("lock still held")
	}
}

// A lease lost before the job's own release is still reported.
func TestWithLockJobReleasesLostLease(t *testing.T) {
	m := newMemLocker()
	m.fails["job"] = true
	err := WithLock(context.Background(), m, "job", Options{AtMost: 90 * time.Millisecond}, func(ctx context.Context, lease Lease) error {
		<-lease.Done()
		if err := lease.Release(context.Background()); !errors.Is(err, ErrLeaseLost) {
			t.Errorf("release of a lost lease: %v, want ErrLeaseLost", err)
		}
		return nil // the job ignores the loss
	})
	if !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("got %v, want the loss reported", err)
	}
}

// untilLocker's leases have an Until and refreshes that fail without
// saying the lease is lost (the database does not answer).
type untilLocker struct{ memLocker }

func (u *untilLocker) Acquire(ctx context.Context, name string, opts Options) (Lease, error) {
	l, err := u.memLocker.Acquire(ctx, name, opts)
	if err != nil {
		return nil, err
	}
	return &untilLease{memLease: l.(*memLease), until: time.Now().Add(opts.AtMost)}, nil
}

type untilLease struct {
	*memLease
	until time.Time
}

func (l *untilLease) Until() time.Time { return l.until }

func (l *untilLease) Refresh(ctx context.Context) error {
	return fmt.Errorf("refresh: %w", errors.New("connection refused"))
}

// When refreshes keep failing, the job is stopped SafetyMargin before the
// lease ends, with a cause matching ErrLeaseLost.
func TestWithLockStopsBeforeLeaseEnds(t *testing.T) {
	u := &untilLocker{*newMemLocker()}
	const atMost = 3 * time.Second
	var cancelledAt, until time.Time
	err := WithLock(context.Background(), u, "job", Options{AtMost: atMost}, func(ctx context.Context, lease Lease) error {
		until = lease.Until()
		select {
		case <-ctx.Done():
			cancelledAt = time.Now()
			if !errors.Is(context.Cause(ctx), ErrLeaseLost) {
				t.Errorf("cause = %v, want ErrLeaseLost", context.Cause(ctx))
			}
		case <-time.After(10 * atMost):
			t.Error("the job was not stopped")
		}
		return ctx.Err()
	})
	if !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("got %v, want the early stop reported as ErrLeaseLost", err)
	}
	margin := SafetyMargin(atMost)
	if !cancelledAt.Before(until) {
		t.Fatalf("stopped at %s, not before the lease's end %s", cancelledAt.Format(time.StampMilli), until.Format(time.StampMilli))
	}
	if cancelledAt.Before(until.Add(-margin)) {
		t.Fatalf("stopped at %s, before the margin %s ahead of the end %s", cancelledAt.Format(time.StampMilli), margin, until.Format(time.StampMilli))
	}
}

func TestSafetyMargin(t *testing.T) {
	for _, c := range []struct{ atMost, want time.Duration }{
		{600 * time.Millisecond, 200 * time.Millisecond},
		{3 * time.Second, time.Second},
		{9 * time.Second, time.Second},
		{time.Minute, 6 * time.Second},
		{DefaultAtMost, 30 * time.Second},
	} {
		if got := SafetyMargin(c.atMost); got != c.want {
			t.Errorf("SafetyMargin(%s) = %s, want %s", c.atMost, got, c.want)
		}
	}
}
