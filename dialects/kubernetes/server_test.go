package kubernetes_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects/kubernetes"
	"github.com/schedlock/schedlock/internal/livetest"
)

// dsnEnv names the live API server for the live tests; without it they
// skip, and with it an unreachable server fails them.
const dsnEnv = livetest.Kubernetes

// liveDSN returns the live server's DSN or skips t.
func liveDSN(t testing.TB) string { t.Helper(); return livetest.DSN(t, dsnEnv) }

// open opens dsn, closed when t ends.
func open(t testing.TB, dsn string) *kubernetes.Backend {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := kubernetes.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("open %s: %v", dsn, err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// kubeconfigOf is the kubeconfig file a DSN names (?kubeconfig=), for the
// tests that build a client-go client of their own.
func kubeconfigOf(t testing.TB, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil || u.Query().Get("kubeconfig") == "" {
		t.Fatalf("%s names no kubeconfig file (?kubeconfig=)", dsnEnv)
	}
	return u.Query().Get("kubeconfig")
}
