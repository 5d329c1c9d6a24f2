package checks

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

func TestClassify(t *testing.T) {
	grant := &dialects.PrivilegeError{Privilege: "EXECUTE ON DBMS_LOCK", Grant: "GRANT EXECUTE ON SYS.DBMS_LOCK TO app"}
	tests := []struct {
		name       string
		optional   bool
		detail     string
		err        error
		wantStatus Status
		wantDetail string
		wantRemedy string
	}{
		{"pass", false, "ok", nil, StatusPass, "ok", ""},
		{"fail", false, "", errors.New("boom"), StatusFail, "boom", ""},
		{"fail keeps detail", false, "counters [1 2]", errors.New("lost"), StatusFail, "counters [1 2]; lost", ""},
		{"skip", false, "", Skipf("no killer"), StatusSkip, "no killer", ""},
		{"warn", false, "", Warnf("slow"), StatusWarn, "slow", ""},
		{"wrapped warn", false, "", fmt.Errorf("probe: %w", Warnf("slow")), StatusWarn, "probe: slow", ""},
		{"remedied", false, "", &Remedied{Err: errors.New("stub"), Remedy: "use table"}, StatusFail, "stub", "use table"},
		{"remedied warn", false, "", &Remedied{Err: Warnf("skew"), Remedy: "ntp"}, StatusWarn, "skew", "ntp"},
		{"privilege", false, "", fmt.Errorf("kill: %w", grant), StatusFail, "kill: " + grant.Error(), grant.Grant},
		{"privilege optional", true, "", fmt.Errorf("kill: %w", grant), StatusSkip, "kill: " + grant.Error(), grant.Grant},
		{"privilege without grant", false, "", &dialects.PrivilegeError{Privilege: "PROCESS"}, StatusFail, "missing privilege PROCESS", "grant the database user PROCESS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, detail, remedy := classify(Check{Optional: tt.optional}, tt.detail, tt.err)
			if st != tt.wantStatus || detail != tt.wantDetail || remedy != tt.wantRemedy {
				t.Errorf("classify = %s, %q, %q; want %s, %q, %q", st, detail, remedy, tt.wantStatus, tt.wantDetail, tt.wantRemedy)
			}
		})
	}
}

func TestRunCheckRecoversPanicsAndCleansUp(t *testing.T) {
	db, _ := openFake(faults{})
	r, err := NewRunner(Config{Backend: db})
	if err != nil {
		t.Fatal(err)
	}
	cleaned := false
	res := r.RunCheck(t.Context(), Check{ID: "x", Run: func(_ context.Context, env *Env) (string, error) {
		env.Defer(func(context.Context) error { cleaned = true; return nil })
		panic("bad check")
	}})
	if res.Status != StatusFail || res.Detail != "check panicked: bad check" || res.ID != "x" {
		t.Errorf("result %+v; want a failure naming the panic", res)
	}
	if !cleaned {
		t.Error("deferred cleanup did not run after the panic")
	}
}

func TestEnvReleasesLeasesLeftHeld(t *testing.T) {
	db, server := openFake(faults{})
	r, err := NewRunner(Config{Backend: db, Strategies: []dialects.Strategy{dialects.StrategySession}})
	if err != nil {
		t.Fatal(err)
	}
	var name string
	res := r.RunCheck(t.Context(), Check{ID: "leaky", Run: func(ctx context.Context, env *Env) (string, error) {
		l, err := env.SessionLocker()
		if err != nil {
			return "", err
		}
		name = env.Name("leak")
		_, err = env.Acquire(ctx, l, name, dialects.Options{})
		return "left held", err
	}})
	if res.Status != StatusPass {
		t.Fatalf("result %+v", res)
	}
	server.mu.Lock()
	defer server.mu.Unlock()
	if _, held := server.sessions[name]; held || name == "" {
		t.Errorf("lock %q still held after the check ended", name)
	}
}

func TestNamesAreUniqueAndTableNamesPlain(t *testing.T) {
	db, _ := openFake(faults{})
	rs := newRunState(Config{Backend: db, Prefix: "p"})
	env := rs.env()
	if a, b := env.Name("x"), env.Name("x"); a == b {
		t.Errorf("Name returned %q twice", a)
	}
	for _, tt := range []struct{ prefix, suffix, want string }{
		{"schedlock_selfcheck_0a1b2c3d", "_shedlock", "schedlock_selfcheck_0a1b2c3d_shedlock"},
		{"My-Run 1", "", "my_run_1"},
		{"9lives", "", "_lives"},
		{"", "_t", "schedlock_selfcheck_t"},
	} {
		got := tableName(tt.prefix, tt.suffix)
		if got != tt.want {
			t.Errorf("tableName(%q, %q) = %q; want %q", tt.prefix, tt.suffix, got, tt.want)
		}
		if _, err := (dialects.Table{Name: got}).Schema(); err != nil {
			t.Errorf("tableName(%q, %q) = %q is not a valid table: %v", tt.prefix, tt.suffix, got, err)
		}
	}
	long := tableName(string(make([]byte, 100)), "_sys_sched_lock")
	if len(long) != 63 {
		t.Errorf("long table name has %d characters, want 63", len(long))
	}
}
