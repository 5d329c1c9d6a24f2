package cmd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
)

// What `schedlock run -- true` sends to the Kubernetes API server: every
// request, seen by an HTTP proxy the kubeconfig points the client to
// (over TLS with a certificate of its own; it forwards them over TLS to
// the test apiserver). 4 on a Lease that does not exist yet: the server's
// version (detection, and the proof that it accepts the credentials), the
// acquire's get and create, the release's update (client-go's LeaseLock
// makes the same calls).
func TestKubernetesRunSendsFourRequests(t *testing.T) {
	_, kubeconfig := kubeLive(t)
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	var server *url.URL
	pool := x509.NewCertPool()
	for _, c := range cfg.Clusters {
		if server, err = url.Parse(c.Server); err != nil {
			t.Fatal(err)
		}
		pool.AppendCertsFromPEM(c.CertificateAuthorityData)
	}
	var mu sync.Mutex
	var calls []string
	proxy := httputil.NewSingleHostReverseProxy(server)
	proxy.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls = append(calls, r.Method+" "+r.URL.Path)
		mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	// The client trusts the proxy's certificate and sends it the token.
	for _, c := range cfg.Clusters {
		c.Server = srv.URL
		c.CertificateAuthorityData = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	}
	via := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, via); err != nil {
		t.Fatal(err)
	}
	name := "count-" + strings.ToLower(strings.TrimPrefix(t.Name(), "Test"))
	leases := kubeLeases(t, kubeconfig, "default")
	_ = leases.Delete(t.Context(), name, metav1.DeleteOptions{})
	t.Cleanup(func() { _ = leases.Delete(context.Background(), name, metav1.DeleteOptions{}) })

	if r := runCmd(t, false, nil, "run", "--dsn", "k8s://default?kubeconfig="+via, "--name", name, "--", "true"); r.err != nil {
		t.Fatalf("run: %v\n%s", r.err, r.stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	lease := "/apis/coordination.k8s.io/v1/namespaces/default/leases"
	want := "GET /version, GET " + lease + "/" + name + ", POST " + lease + ", PUT " + lease + "/" + name
	if got := strings.Join(calls, ", "); got != want {
		t.Errorf("run sent %s, want %s", got, want)
	}
}
