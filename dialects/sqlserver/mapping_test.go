package sqlserver

import (
	"errors"
	"strings"
	"testing"
	"time"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// mutation changes one Engine method of a backend: the Engine it returns
// embeds b and replaces that method. Nil leaves the backend as it is.
type mutation func(b *Backend) sqlkit.Engine

// withSessionLocker replaces the backend's session locker with newLocker's.
func withSessionLocker(newLocker func(b *Backend) (dialects.Locker, error)) mutation {
	return func(b *Backend) sqlkit.Engine { return sessionLockerOf{b, newLocker} }
}

type sessionLockerOf struct {
	*Backend
	newLocker func(b *Backend) (dialects.Locker, error)
}

func (s sessionLockerOf) NewSessionLocker(dialects.SessionNames) (dialects.Locker, error) {
	return s.newLocker(s.Backend)
}

// withTableLocker replaces the backend's lease-table locker with
// newLocker's.
func withTableLocker(newLocker func(b *Backend, t dialects.Table) (dialects.TableLocker, error)) mutation {
	return func(b *Backend) sqlkit.Engine { return tableLockerOf{b, newLocker} }
}

type tableLockerOf struct {
	*Backend
	newLocker func(b *Backend, t dialects.Table) (dialects.TableLocker, error)
}

func (s tableLockerOf) NewTableLocker(t dialects.Table) (dialects.TableLocker, error) {
	return s.newLocker(s.Backend, t)
}

// runChecks runs the selfcheck checks only against the backend detected
// on sim, changed by mutate, and returns the report.
func runChecks(t *testing.T, sim *simServer, mutate mutation, strategy dialects.Strategy, only ...string) *checks.Report {
	t.Helper()
	db := sim.detected(t)
	if mutate != nil {
		db.DB = sqlkit.New(db.SQL, db.Info, nil, mutate(db))
	}
	rep, err := checks.Run(t.Context(), checks.Config{Backend: db, Strategies: []dialects.Strategy{strategy}, Only: only})
	if err != nil {
		t.Fatalf("selfcheck: %v", err)
	}
	return rep
}

// statusOf returns the status of the check id in rep.
func statusOf(t *testing.T, rep *checks.Report, id string) checks.Result {
	t.Helper()
	for _, r := range rep.Results {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("check %s did not run; results: %+v", id, rep.Results)
	return checks.Result{}
}

func TestGetAppLockReturnCodes(t *testing.T) {
	tests := []struct {
		code    int
		granted bool
		err     error
	}{
		{0, true, nil},
		{1, true, nil}, // granted after waiting: success, the classic mistake treats it as failure
		{-1, false, nil},
		{-2, false, ErrLockCanceled},
		{-3, false, ErrDeadlockVictim},
		{-999, false, ErrLockCall},
		{-7, false, ErrUnknownReturnCode},
	}
	for _, tt := range tests {
		granted, err := getAppLockGranted(tt.code, "r")
		if granted != tt.granted || !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
			t.Errorf("sp_getapplock %d: got %v, %v; want %v, %v", tt.code, granted, err, tt.granted, tt.err)
		}
		var ae *AppLockError
		if tt.err != nil && (!errors.As(err, &ae) || ae.Code != tt.code || ae.Proc != "sp_getapplock") {
			t.Errorf("sp_getapplock %d: error %v is not an *AppLockError with the code", tt.code, err)
		}
	}
}

func TestReleaseReturnCodes(t *testing.T) {
	tests := []struct {
		code     int
		valid    bool
		released bool
		err      error
	}{
		{0, true, true, nil},
		{notHeldCode, true, false, nil},
		{-1, true, false, ErrUnknownReturnCode},
	}
	for _, tt := range tests {
		released, err := releaseDone(tt.code, tt.valid, "r")
		if released != tt.released || !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
			t.Errorf("sp_releaseapplock %d: got %v, %v; want %v, %v", tt.code, released, err, tt.released, tt.err)
		}
	}
	if _, err := releaseDone(0, false, "r"); err == nil {
		t.Error("a NULL return code was taken for an answer")
	}
}

// TestGrantedAfterWaitIsSuccess runs the session checks against a server
// whose sp_getapplock answers 1 (granted after waiting): they pass with
// this package's mapping, and fail with the classic mistake of treating
// only 0 as success, so the suite catches that mistake.
func TestGrantedAfterWaitIsSuccess(t *testing.T) {
	only := []string{"session.acquire", "session.contend", "session.pool-trap", "session.race10"}

	sim := newSim()
	sim.grantAfterWait = true
	rep := runChecks(t, sim, nil, dialects.StrategySession, only...)
	for _, id := range only {
		if r := statusOf(t, rep, id); r.Status != checks.StatusPass {
			t.Errorf("%s with return code 1 and the right mapping: %s: %s", id, r.Status, r.Detail)
		}
	}

	onlyZero := func(code int, resource string) (bool, error) {
		if code == 0 {
			return true, nil
		}
		return getAppLockGranted(-1, resource)
	}
	buggy := withSessionLocker(func(b *Backend) (dialects.Locker, error) {
		return &sqlkit.SessionLocker{Dialect: Name, DB: b.SQL, Ops: &SessionOps{Info: b.Info, granted: onlyZero}}, nil
	})
	sim = newSim()
	sim.grantAfterWait = true
	rep = runChecks(t, sim, buggy, dialects.StrategySession, only...)
	if r := statusOf(t, rep, "session.acquire"); r.Status != checks.StatusFail {
		t.Errorf("session.acquire with return code 1 read as a failure: %s (%s); want fail", r.Status, r.Detail)
	}
}

// TestGetAppLockFailures proves -1 is "held" and -2, -3 and -999 are
// errors, not "held" and not a lease.
func TestGetAppLockFailures(t *testing.T) {
	for code, want := range map[int]error{-1: dialects.ErrHeld, -2: ErrLockCanceled, -3: ErrDeadlockVictim, -999: ErrLockCall} {
		sim := newSim()
		sim.getAppLockCode = &code
		l, err := sim.detected(t).SessionLocker()
		if err != nil {
			t.Fatal(err)
		}
		lease, err := l.Acquire(t.Context(), "job", dialects.Options{})
		if lease != nil || !errors.Is(err, want) {
			t.Errorf("sp_getapplock %d: Acquire = %v, %v; want an error matching %v", code, lease, err, want)
		}
		if code != -1 && errors.Is(err, dialects.ErrHeld) {
			t.Errorf("sp_getapplock %d was reported as a held lock: %v", code, err)
		}
	}
}

// builderWithoutHook is Builder with its locktable.DuplicateKeyer hidden
// (only the Builder and Dropper methods show through).
type builderWithoutHook struct {
	locktable.Builder
	locktable.Dropper
}

// TestDuplicateKeyMeansHeld makes another writer insert the name between
// the MERGE's search and its insert: the server answers 2627 (or 2601 for a
// unique index); Acquire must report the lock held by that writer. The
// engine with a builder that hides IsDuplicateKey reports an error
// instead, so the hook is what the test proves.
func TestDuplicateKeyMeansHeld(t *testing.T) {
	for _, number := range []int32{errDuplicateKey, errDuplicateIndexKey} {
		sim := newSim()
		db := sim.detected(t)
		tl, err := db.TableLocker(dialects.Table{})
		if err != nil {
			t.Fatal(err)
		}
		if err := tl.CreateTable(t.Context()); err != nil {
			t.Fatal(err)
		}
		sim.dupKeyOnInsert = number
		_, err = tl.Acquire(t.Context(), "nightly", dialects.Options{Owner: "me"})
		var held *dialects.HeldError
		if !errors.As(err, &held) || held.Holder != "other-writer" || held.Name != "nightly" {
			t.Fatalf("error %d: Acquire = %v; want a *HeldError naming other-writer", number, err)
		}

		raw, err := locktable.New(db.SQL, builderWithoutHook{Builder{}, Builder{}}, dialects.Table{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = raw.Acquire(t.Context(), "weekly", dialects.Options{Owner: "me"})
		if errors.Is(err, dialects.ErrHeld) || errNumber(err) != number {
			t.Errorf("error %d: the engine without the hook returned %v; the simulator should surface the server error", number, err)
		}
		if !(Builder{}).IsDuplicateKey(err) {
			t.Errorf("IsDuplicateKey(%v) = false", err)
		}
	}
}

// TestDuplicateKeyWaitRetries proves a duplicate key during a wait is
// retried like any held lock.
func TestDuplicateKeyWaitRetries(t *testing.T) {
	sim := newSim()
	tl, err := sim.detected(t).TableLocker(dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.CreateTable(t.Context()); err != nil {
		t.Fatal(err)
	}
	sim.dupKeyOnInsert = errDuplicateKey
	start := time.Now()
	_, err = tl.Acquire(t.Context(), "x", dialects.Options{Wait: 200 * time.Millisecond, RetryEvery: 20 * time.Millisecond})
	if !errors.Is(err, dialects.ErrHeld) || time.Since(start) < 150*time.Millisecond {
		t.Errorf("Acquire with a wait = %v after %s; want ErrHeld after about 200ms", err, time.Since(start))
	}
}

// TestTrailingSpacesNeedMapping proves that the simulator compares names
// as SQL Server does ("a" = "a ") and that Builder's FitName hook is what
// keeps such names apart: the names.distinct check passes with it and fails
// with the engine's own mapping.
func TestTrailingSpacesNeedMapping(t *testing.T) {
	rep := runChecks(t, newSim(), nil, dialects.StrategyTable, "table.names.distinct")
	if r := statusOf(t, rep, "table.names.distinct"); r.Status != checks.StatusPass {
		t.Errorf("names.distinct with FitName: %s: %s", r.Status, r.Detail)
	}
	bare := withTableLocker(func(b *Backend, t dialects.Table) (dialects.TableLocker, error) {
		return locktable.New(b.SQL, builderWithoutFit{}, t)
	})
	rep = runChecks(t, newSim(), bare, dialects.StrategyTable, "table.names.distinct")
	r := statusOf(t, rep, "table.names.distinct")
	if r.Status != checks.StatusFail || !strings.Contains(r.Detail, "trailing space") {
		t.Errorf("names.distinct on the bare engine: %s (%s); want fail (trailing space)", r.Status, r.Detail)
	}
}

// builderWithoutFit is Builder without the NameFitter hook: the two
// embedded FitName methods are ambiguous, so neither is promoted.
type builderWithoutFit struct {
	Builder
	hiddenFit
}

type hiddenFit struct{}

func (hiddenFit) FitName(string, int) string { return "" }

var _ locktable.NameFitter = Builder{}

func TestIsMissingTable(t *testing.T) {
	missing := mssql.Error{Number: errInvalidObjectName, Class: 16, Message: "Invalid object name 'schedlock'."}
	if !(Builder{}).IsMissingTable(missing) || !(Builder{}).IsMissingTable(&missing) {
		t.Error("error 208 is not a missing table")
	}
	if (Builder{}).IsMissingTable(mssql.Error{Number: errDuplicateKey}) || (Builder{}).IsMissingTable(errors.New("208")) {
		t.Error("another error was taken for a missing table")
	}
}

// withoutHoldLock is Builder with an acquire MERGE that lacks WITH
// (HOLDLOCK), like a writer that forgot it: under READ COMMITTED two
// sessions may then both insert a new name, and one gets error 2627.
type withoutHoldLock struct{ Builder }

func (b withoutHoldLock) Acquire(s dialects.Schema) locktable.Stmt {
	st := b.Builder.Acquire(s)
	st.SQL = strings.Replace(st.SQL, " WITH (HOLDLOCK)", "", 1)
	return st
}

// TestDuplicateKeyAsErrorFails runs the race check with an acquire that
// lets first inserts race, so racers meet error 2627: it passes with the
// duplicate-key hook and fails without it, so the suite catches a builder
// that forgets the hook.
func TestDuplicateKeyAsErrorFails(t *testing.T) {
	only := []string{"table.race10"}
	lockerWith := func(lb locktable.Builder) mutation {
		return withTableLocker(func(b *Backend, tb dialects.Table) (dialects.TableLocker, error) {
			return locktable.New(b.SQL, lb, tb)
		})
	}
	good := statusOf(t, runChecks(t, newSim(), lockerWith(withoutHoldLock{}), dialects.StrategyTable, only...), "table.race10")
	if good.Status != checks.StatusPass {
		t.Fatalf("table.race10 with the hook: %s (%s); want pass", good.Status, good.Detail)
	}
	bad := statusOf(t, runChecks(t, newSim(), lockerWith(builderWithoutHook{withoutHoldLock{}, Builder{}}), dialects.StrategyTable, only...), "table.race10")
	if bad.Status != checks.StatusFail || !strings.Contains(bad.Detail, "2627") {
		t.Errorf("table.race10 with 2627 reported as an error: %s (%s); want fail showing 2627", bad.Status, bad.Detail)
	}
	t.Logf("caught without the hook: %s", bad.Detail)
}
