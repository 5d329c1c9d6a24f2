package postgres

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
	"github.com/schedlock/schedlock/dialects/locktable"
)

const (
	cockroachBanner = "CockroachDB CCL v24.3.0 (x86_64-pc-linux-gnu, built 2024/11/14 00:00:00, go1.22.8 X:nocoverageredesign)"
	openGaussBanner = "(openGauss 5.0.0 build a07d57c3) compiled at 2023-03-30 00:00:00 commit 0 last mr  on x86_64-unknown-linux-gnu, compiled by g++ (GCC) 7.3.0, 64-bit"
)

// TestCockroachSimulated: the stub advisory functions keep CockroachDB on
// the table strategy, and the lease table passes the whole suite while
// every third write is aborted with SQLSTATE 40001 and sent again.
func TestCockroachSimulated(t *testing.T) {
	sim, db := openPgSim(t, pgSimConfig{Banner: cockroachBanner, Stub: true, SerializationEvery: 3})
	if db.Info.Product != dialects.ProductCockroachDB {
		t.Fatalf("Info = %+v; want cockroachdb", db.Info)
	}
	if s, why := db.Recommend(); s != dialects.StrategyTable || !strings.Contains(why, "40001") {
		t.Errorf("Recommend = %s, %q; want table, naming the 40001 retries", s, why)
	}
	if _, err := db.SessionLocker(); !errors.Is(err, dialects.ErrUnsupported) {
		t.Errorf("SessionLocker error = %v; want ErrUnsupported (stub advisory locks)", err)
	}
	caps, err := db.Probe(testCtx(t), dialects.ProbeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := caps.Recommended; r.LockStrategy != dialects.StrategyTable || r.ClaimStrategy != dialects.ClaimOptimistic || caps.SessionLocks.Status != dialects.StatusStub {
		t.Errorf("probe: session locks %s, recommended %+v; want a stub, table and optimistic claims", caps.SessionLocks.Status, r)
	}
	// The stub is reported as a warning: the session locker refuses
	// CockroachDB, so schedlock never relies on it.
	runSuiteExpecting(t, checks.Config{Backend: db, Strategies: []dialects.Strategy{dialects.StrategyTable}, Tables: presetTables()},
		map[string]checks.Status{"probe.session-locks": checks.StatusWarn})
	sim.assertUnderstood(t)
	if n := sim.abortedWrites(); n == 0 {
		t.Error("no write was aborted with 40001: the retry path was not exercised")
	} else {
		t.Logf("%d writes answered 40001 and were sent again", n)
	}
}

// runSuiteExpecting runs the selfcheck suite as dialecttest.Run does, one
// subtest per result, except that a check named in expect must end with
// that status instead of passing.
func runSuiteExpecting(t *testing.T, cfg checks.Config, expect map[string]checks.Status) {
	t.Helper()
	rep, err := checks.Run(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range rep.Results {
		t.Run(res.ID, func(t *testing.T) {
			want, expected := expect[res.ID]
			switch {
			case expected && res.Status != want:
				t.Errorf("%s: %s (%s); want %s", res.Title, res.Status, res.Detail, want)
			case expected:
				t.Logf("%s, as expected: %s", res.Status, res.Detail)
			case res.Status == checks.StatusFail, res.Status == checks.StatusSkip && res.Remedy != "":
				t.Errorf("%s: %s: %s (remedy: %s)", res.Title, res.Status, res.Detail, res.Remedy)
			default:
				t.Logf("%s: %s", res.Status, res.Detail)
			}
		})
	}
}

// noRetry hides Builder's Retrier, as a dialect without the retry would be.
type noRetry struct{ locktable.Builder }

// TestSerializationFailureNeedsTheRetry proves the retry is what carries
// the table strategy through a 40001: the same server fails a release
// without it.
func TestSerializationFailureNeedsTheRetry(t *testing.T) {
	for _, retry := range []bool{true, false} {
		sim := newPgSim(t, pgSimConfig{Banner: cockroachBanner, Stub: true, SerializationEvery: 2})
		db := sim.open(t)
		var b locktable.Builder = Builder{}
		if !retry {
			b = noRetry{Builder{}}
		}
		l, err := locktable.New(db, b, dialects.Table{})
		if err != nil {
			t.Fatal(err)
		}
		if err := l.CreateTable(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		lease, err := l.Acquire(testCtx(t), "job", dialects.Options{Owner: "A"}) // write 1
		if err != nil {
			t.Fatalf("retry %v: acquire: %v", retry, err)
		}
		err = lease.Release(testCtx(t)) // write 2 is aborted
		switch {
		case retry && err != nil:
			t.Errorf("with the retry, release after a 40001 = %v; want success", err)
		case !retry && !hasCode(err, codeSerializationFailure):
			t.Errorf("without the retry, release after a 40001 = %v; want the 40001", err)
		}
	}
}

// TestOpenGaussSimulated runs the suite on a simulated openGauss: its
// advisory locks are proven at detection (so session is recommended), and
// the lease table uses ON DUPLICATE KEY UPDATE with rows affected.
func TestOpenGaussSimulated(t *testing.T) {
	for _, strategy := range dialects.Strategies {
		t.Run(string(strategy), func(t *testing.T) {
			sim, db := openPgSim(t, pgSimConfig{Banner: openGaussBanner, OpenGauss: true})
			if db.Info.Product != dialects.ProductOpenGauss {
				t.Fatalf("Info = %+v; want opengauss", db.Info)
			}
			if s, why := db.Recommend(); s != dialects.StrategySession {
				t.Errorf("Recommend = %s, %q; want session after the proof", s, why)
			}
			opts := dialecttest.Options{Strategies: []dialects.Strategy{strategy}}
			if strategy == dialects.StrategyTable {
				opts.Tables = presetTables()
			}
			dialecttest.Run(t, db, opts)
			sim.assertUnderstood(t)
			if strategy == dialects.StrategyTable && sim.count("table.acquire") == 0 {
				t.Error("no ON DUPLICATE KEY UPDATE acquire was sent")
			}
		})
	}
}

// authServer is a TCP server that answers every login with one
// authentication request: code and payload, as openGauss sends them.
func authServer(t *testing.T, code uint32, payload []byte) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				var n uint32
				if binary.Read(c, binary.BigEndian, &n) != nil || n < 4 {
					return
				}
				if _, err := io.ReadFull(c, make([]byte, n-4)); err != nil { // the startup message
					return
				}
				body := binary.BigEndian.AppendUint32(nil, code)
				body = append(body, payload...)
				msg := append([]byte{'R'}, binary.BigEndian.AppendUint32(nil, uint32(len(body)+4))...)
				_, _ = c.Write(append(msg, body...))
				_, _ = io.Copy(io.Discard, c)
			}(c)
		}
	}()
	return ln.Addr().String()
}

// openGaussAuthPayload is the body of openGauss's SHA256 request:
// password_stored_method, a 64-character salt, an 8-byte token and the
// iteration count.
func openGaussAuthPayload() []byte {
	p := binary.BigEndian.AppendUint32(nil, 2)
	p = append(p, strings.Repeat("0123456789abcdef", 4)...)
	p = append(p, "tok12345"...)
	return binary.BigEndian.AppendUint32(p, 10000)
}

// TestOpenGaussAuthError drives the real pgx driver against a server that
// asks for openGauss's password methods and checks that detection, and
// Open's connection before it, turn pgx's error into the actionable one.
func TestOpenGaussAuthError(t *testing.T) {
	for _, code := range []uint32{10, 11, 13} {
		addr := authServer(t, code, openGaussAuthPayload())
		db, err := sql.Open(DriverName, "postgres://app:secret@"+addr+"/jobs?sslmode=disable&connect_timeout=5")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, detectErr := New(ctx, db, nil)
		_, openErr := Open(ctx, dialects.Target{Scheme: "postgres", Conn: "postgres://app:secret@" + addr + "/jobs?sslmode=disable&connect_timeout=5"})
		cancel()
		_ = db.Close()
		var unreachable *dialects.UnreachableError
		if !errors.As(openErr, &unreachable) {
			t.Errorf("code %d: Open error = %v; want an UnreachableError", code, openErr)
		}
		for what, err := range map[string]error{"detection": detectErr, "Open": openErr} {
			var ae *AuthMethodError
			if !errors.As(err, &ae) || ae.Code != int(code) {
				t.Errorf("code %d: %s error = %v; want an *AuthMethodError with code %d", code, what, err, code)
				continue
			}
			msg := err.Error()
			if !strings.Contains(msg, "password_encryption_type = 1") || strings.Contains(msg, "\n") || strings.Contains(msg, "secret") {
				t.Errorf("code %d: %s message %q; want one line naming password_encryption_type and no password", code, what, msg)
			}
		}
	}
}

// TestAuthErrorLeavesOtherErrorsAlone: a refused password is not an
// authentication-method problem.
func TestAuthErrorLeavesOtherErrorsAlone(t *testing.T) {
	for _, err := range []error{nil, errors.New("failed SASL auth: server does not support SCRAM-SHA-256"), context.DeadlineExceeded} {
		if got := explainAuthError(err); got != err {
			t.Errorf("explainAuthError(%v) = %v; want it unchanged", err, got)
		}
	}
}
