package locktabletest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
)

// CheckRefreshAll proves, through l (a Locker whose table exists, any
// preset, its builder a locktable.BatchRefresher), what renewing many
// leases with one statement means, row by row: RefreshAll of one owner's
// leases sends one statement per owner and renews exactly the rows that
// are still that lease's — not a row another owner took over, not an
// expired one, not (with a token column) a row acquired again since, not
// a live row of the same owner that was not asked for — reporting each
// lease not renewed lost; the rows it does not renew keep their lease
// end. Refreshes called at once by many goroutines share
// statements.
func CheckRefreshAll(t *testing.T, l *locktable.Locker) {
	t.Helper()
	ctx := t.Context()
	hasToken := l.Schema().TokenCol != ""
	a := dialects.Options{Owner: "batch-a", AtMost: time.Minute}
	take := func(name string, opts dialects.Options) dialects.Lease {
		t.Helper()
		lease, err := l.Acquire(ctx, name, opts)
		if err != nil {
			t.Fatalf("acquire %s as %s: %v", name, opts.Owner, err)
		}
		return lease
	}
	expire := func(name string) {
		t.Helper()
		if ok, err := l.Expire(ctx, name); err != nil || !ok {
			t.Fatalf("expire %s = %v, %v", name, ok, err)
		}
	}
	// until reads a row's lease end; zero when there is no row (a
	// sys_sched_lock table deletes the row of a forced unlock).
	until := func(name string) (dialects.Row, time.Time) {
		t.Helper()
		row, _, err := l.Inspect(ctx, name)
		if err != nil {
			t.Fatalf("inspect %s: %v", name, err)
		}
		return row, row.Until
	}

	kept0, kept4 := take("rb-0", a), take("rb-4", a)
	takenOver := take("rb-1", a)
	expire("rb-1")
	take("rb-1", dialects.Options{Owner: "batch-b", AtMost: time.Minute})
	expired := take("rb-2", a)
	expire("rb-2")
	other := take("rb-5", dialects.Options{Owner: "batch-c", AtMost: time.Minute})
	// rb-6 is a's too, live, with the token the others have, but not in
	// the batch: its row must stay as it is.
	notAsked := take("rb-6", a)
	leases := []dialects.Lease{kept0, takenOver, expired, kept4, other}
	want := []error{nil, dialects.ErrLeaseLost, dialects.ErrLeaseLost, nil, nil}
	renewed := []string{"rb-0", "rb-4", "rb-5"}
	if hasToken {
		old := take("rb-3", a)
		expire("rb-3")
		again := take("rb-3", a)
		leases = append(leases, old, again)
		want = append(want, dialects.ErrLeaseLost, nil)
		renewed = append(renewed, "rb-3")
	}
	before := map[string]time.Time{}
	for _, n := range []string{"rb-0", "rb-1", "rb-2", "rb-3", "rb-4", "rb-5", "rb-6"} {
		if n == "rb-3" && !hasToken {
			continue
		}
		_, before[n] = until(n)
	}
	time.Sleep(20 * time.Millisecond) // so that a renewed lease end is a later one

	stats := l.Stats()
	errs := l.RefreshAll(ctx, leases)
	sent := l.Stats().Sub(stats)
	for i, err := range errs {
		switch {
		case want[i] == nil && err != nil:
			t.Errorf("RefreshAll: lease %s: %v, want it renewed", leases[i].Name(), err)
		case want[i] != nil && !errors.Is(err, want[i]):
			t.Errorf("RefreshAll: lease %s (owner %s): %v, want %v", leases[i].Name(), leases[i].Owner(), err, want[i])
		}
	}
	// Owner a's leases in one statement, c's lease (alone) in its own,
	// and the second lease of rb-3 in one of its own: a statement's answer
	// tells two leases of one name apart only in different statements.
	wantSingle := int64(1)
	if hasToken {
		wantSingle++
	}
	if sent.RefreshBatch != 1 || sent.Refresh != wantSingle {
		t.Errorf("RefreshAll sent %d batch and %d single refresh statements, want 1 and %d", sent.RefreshBatch, sent.Refresh, wantSingle)
	}
	for n, b := range before {
		row, after := until(n)
		isRenewed := false
		for _, r := range renewed {
			isRenewed = isRenewed || r == n
		}
		switch {
		case isRenewed && !after.After(b):
			t.Errorf("row %s: lease end %s, was %s; want it renewed", n, after, b)
		case !isRenewed && !after.Equal(b):
			t.Errorf("row %s (owner %s): lease end %s, was %s; want it untouched", n, row.Owner, after, b)
		}
	}
	if row, _ := until("rb-1"); row.Owner != "batch-b" {
		t.Errorf("row rb-1 is %s's, want batch-b's", row.Owner)
	}

	// Many refreshes at once share statements.
	const many = 24
	group := make([]dialects.Lease, many)
	for i := range group {
		group[i] = take(fmt.Sprintf("rb-many-%d", i), a)
	}
	stats = l.Stats()
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs = make([]error, many)
	for i, lease := range group {
		wg.Go(func() {
			<-start
			errs[i] = lease.Refresh(ctx)
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("concurrent refresh of %s: %v", group[i].Name(), err)
		}
	}
	sent = l.Stats().Sub(stats)
	if sent.RefreshBatch < 1 || sent.Refresh+sent.RefreshBatch >= many {
		t.Errorf("%d concurrent refreshes sent %d single and %d batch statements, want them to share statements", many, sent.Refresh, sent.RefreshBatch)
	}
	for _, lease := range append(append(group, notAsked), leases...) {
		_ = lease.Release(ctx)
	}
}
