package claim_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/claim"
)

// Warnings reports a claim lease shorter than the expected run time, the
// default lease (5 minutes) included, and nothing otherwise.
func TestQueueWarnings(t *testing.T) {
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "tasks.db") + "?x-create-file=true"
	for _, tc := range []struct {
		opts claim.Options
		want string
	}{
		{claim.Options{Lease: time.Minute, ExpectedRun: 2 * time.Minute}, "claim lease 1m0s is shorter than the expected run time 2m0s"},
		{claim.Options{ExpectedRun: time.Hour}, "claim lease 5m0s is shorter than the expected run time 1h0m0s"},
		{claim.Options{Lease: time.Hour, ExpectedRun: time.Hour}, ""},
		{claim.Options{Lease: time.Minute}, ""},
	} {
		q, err := claim.Open(t.Context(), dsn, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		w := q.Warnings()
		_ = q.Close()
		switch {
		case tc.want == "" && len(w) != 0:
			t.Errorf("lease %s, expected run %s: warnings %q, want none", tc.opts.Lease, tc.opts.ExpectedRun, w)
		case tc.want != "" && (len(w) != 1 || !strings.HasPrefix(w[0], tc.want)):
			t.Errorf("lease %s, expected run %s: warnings %q, want one saying %q", tc.opts.Lease, tc.opts.ExpectedRun, w, tc.want)
		}
	}
}

// NewOwner is host:pid:random, different on every call.
func TestNewOwner(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	a, b := claim.NewOwner(), claim.NewOwner()
	prefix := host + ":" + strconv.Itoa(os.Getpid()) + ":"
	if !strings.HasPrefix(a, prefix) || !strings.HasPrefix(b, prefix) || a == b {
		t.Errorf("NewOwner() = %q, %q; want two different owners starting %q", a, b, prefix)
	}
}
