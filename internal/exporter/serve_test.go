package exporter

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/schedlock/schedlock/internal/webconfig"
)

// Behind basic auth, /metrics and / need the password and /healthz does
// not; when the context ends, Serve shuts down and returns nil.
func TestServeAuthAndShutdown(t *testing.T) {
	store, take := memoryStore(t)
	take("a", time.Hour)
	e, err := New([]Target{memoryTarget("jobs", store, nil, nil)}, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(path, []byte("basic_auth_users:\n  prom: "+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	web, err := webconfig.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Serve(ctx, l, web) }()
	base := "http://" + l.Addr().String()
	get := func(path string, auth bool) int {
		t.Helper()
		req, _ := http.NewRequest("GET", base+path, nil)
		if auth {
			req.SetBasicAuth("prom", "pw")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct {
		path string
		auth bool
		code int
	}{{"/metrics", false, 401}, {"/", false, 401}, {"/healthz", false, 200}, {"/metrics", true, 200}, {"/", true, 200}} {
		if got := get(tc.path, tc.auth); got != tc.code {
			t.Errorf("GET %s (password %v) = %d, want %d", tc.path, tc.auth, got, tc.code)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve after its context ended: %v", err)
		}
	case <-time.After(ShutdownGrace + 10*time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("still serving after shutdown")
	}
}
