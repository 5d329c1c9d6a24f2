package oralike

import (
	"context"
	"errors"
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

func TestProbeLockAccess(t *testing.T) {
	errMissing := errors.New("PLS-00201: identifier 'SYS.DBMS_LOCK' must be declared")
	errOther := errors.New("ORA-03113: end-of-file on communication channel")
	refused := func(err error) bool { return errors.Is(err, errMissing) }
	for _, tt := range []struct {
		what    string
		usable  bool
		err     error
		refused func(error) bool
		want    LockAccess
	}{
		{"usable", true, nil, refused, LockAccess{Known: true, Usable: true, User: "APP"}},
		{"answered, not usable", false, nil, refused, LockAccess{Known: true, User: "APP"}},
		{"refused", false, errMissing, refused, LockAccess{Known: true, User: "APP", Err: errMissing}},
		{"failed", false, errOther, refused, LockAccess{User: "APP", Err: errOther}},
		{"failed, nothing refuses", false, errMissing, nil, LockAccess{User: "APP", Err: errMissing}},
	} {
		got, err := ProbeLockAccess(context.Background(), "APP", func(context.Context) (bool, error) { return tt.usable, tt.err }, tt.refused)
		if err != nil || got != tt.want {
			t.Errorf("%s: got %+v, %v; want %+v", tt.what, got, err, tt.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := ProbeLockAccess(ctx, "APP", func(ctx context.Context) (bool, error) { return false, ctx.Err() }, refused)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled probe: %v; want context.Canceled", err)
	}
}

func TestLockAccessRecommend(t *testing.T) {
	for _, tt := range []struct {
		access LockAccess
		want   dialects.Strategy
		why    string
	}{
		{LockAccess{Known: true, Usable: true}, dialects.StrategySession, "usable"},
		{LockAccess{Known: true}, dialects.StrategyTable, "missing"},
		{LockAccess{Err: errors.New("x")}, dialects.StrategyTable, "unproven"},
		{LockAccess{Usable: true}, dialects.StrategyTable, "unproven"},
	} {
		if got, why := tt.access.Recommend("usable", "missing", "unproven"); got != tt.want || why != tt.why {
			t.Errorf("%+v: Recommend = %s (%s); want %s (%s)", tt.access, got, why, tt.want, tt.why)
		}
	}
}
