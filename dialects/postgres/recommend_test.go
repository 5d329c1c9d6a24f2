package postgres

import (
	"errors"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

func TestRecommend(t *testing.T) {
	tests := []struct {
		banner   string
		strategy dialects.Strategy
		reason   string // a fragment the reason must contain
	}{
		{"PostgreSQL 15.20 (Debian 15.20-0+deb12u1) on x86_64-pc-linux-gnu", dialects.StrategySession, "PgBouncer"},
		{"CockroachDB CCL v24.3.0 (x86_64-pc-linux-gnu, built …)", dialects.StrategyTable, "stub"},
		{"PostgreSQL 11.2-YB-2.18.0.1-b0 …", dialects.StrategyTable, "before 2025.1"},
		{"PostgreSQL 15.2-YB-2.25.1.0-b0 …", dialects.StrategyTable, "before 2025.1"},
		{"PostgreSQL 15.2-YB-2025.1.0.0-b0 …", dialects.StrategySession, "2025.1"},
		{"KingbaseES V008R006C007B0024 on x86_64-pc-linux-gnu, compiled by gcc …", dialects.StrategyTable, "not proven by detection"},
		{"(openGauss 5.0.0 build a07d57c3) compiled at …", dialects.StrategyTable, "not proven by detection"},
		{"something else", dialects.StrategyTable, "unrecognised"},
	}
	for _, tt := range tests {
		t.Run(tt.banner, func(t *testing.T) {
			got, reason := backendFor(nil, ParseBanner(tt.banner), nil).RecommendStrategy()
			if got != tt.strategy || !strings.Contains(reason, tt.reason) {
				t.Errorf("RecommendStrategy = %s, %q; want %s with %q", got, reason, tt.strategy, tt.reason)
			}
		})
	}
}

func TestNewSessionLockerRefusesStubs(t *testing.T) {
	tests := []struct {
		banner    string
		supported bool
	}{
		{"PostgreSQL 16.3 on …", true},
		{"CockroachDB CCL v24.3.0 (x86_64-pc-linux-gnu, built …)", false},
		{"CockroachDB OSS v21.1.1 (x86_64-unknown-linux-gnu)", false},
		{"PostgreSQL 11.2-YB-2.18.0.1-b0 …", false},
		{"PostgreSQL 15.2-YB-2.25.1.0-b0 …", false},
		{"PostgreSQL 15.2-YB-2025.1.0.0-b0 …", true},
		{"KingbaseES V008R006C007B0024 on x86_64-pc-linux-gnu, compiled by gcc …", true},
	}
	for _, tt := range tests {
		t.Run(tt.banner, func(t *testing.T) {
			l, err := backendFor(nil, ParseBanner(tt.banner), nil).NewSessionLocker(dialects.SessionNames{})
			if tt.supported {
				if err != nil || l == nil || l.Strategy() != dialects.StrategySession {
					t.Fatalf("NewSessionLocker = %v, %v; want a session locker", l, err)
				}
				return
			}
			if !errors.Is(err, dialects.ErrUnsupported) || l != nil {
				t.Fatalf("NewSessionLocker = %v, %v; want ErrUnsupported", l, err)
			}
			if fix, ok := dialects.RemedyOf(err); !ok || fix != dialects.UseTableStrategy {
				t.Errorf("error %v carries remedy %+v, want the table strategy", err, fix)
			}
			if !strings.Contains(err.Error(), "use "+string(dialects.TermStrategyTable)) || strings.Contains(err.Error(), "--") {
				t.Errorf("error %q does not point to the table strategy in the library's words", err)
			}
		})
	}
}

func TestRegistered(t *testing.T) {
	d, ok := dialects.Lookup(Name)
	if !ok {
		t.Fatal("postgres dialect is not registered")
	}
	if d.Open == nil {
		t.Error("the postgres dialect has no Open")
	}
	for _, scheme := range []string{"postgres", "pgx"} {
		got, _, err := dialects.ForScheme(scheme)
		if err != nil || got != d {
			t.Errorf("ForScheme(%q) = %v, %v; want the postgres dialect", scheme, got, err)
		}
	}
}
