package exporter

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/exporter-toolkit/web"
	"golang.org/x/crypto/bcrypt"

	"github.com/schedlock/schedlock/internal/testpki"
	"github.com/schedlock/schedlock/internal/webconfig"
)

// outcome is what a client sees of one request: whether it failed, its
// status, protocol and TLS version, and the headers the web configuration
// sets.
type outcome struct {
	Failed                      bool
	Status                      int
	Proto                       string
	TLSVersion                  uint16
	Auth, FrameOptions, NoSniff string
}

func (o outcome) String() string {
	if o.Failed {
		return "request failed"
	}
	return fmt.Sprintf("%d %s TLS %x auth=%q frame=%q nosniff=%q", o.Status, o.Proto, o.TLSVersion, o.Auth, o.FrameOptions, o.NoSniff)
}

// webRequest is one kind of request sent to both servers.
type webRequest struct {
	name       string
	scheme     string // https, or http on the TLS port
	user, pass string
	clientCert bool
	maxTLS     uint16
}

func (r webRequest) do(t *testing.T, addr string, pki testpki.Files) outcome {
	t.Helper()
	caPEM, err := os.ReadFile(pki.CA)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	cfg := &tls.Config{RootCAs: roots, MaxVersion: r.maxTLS}
	if r.clientCert {
		cert, err := tls.LoadX509KeyPair(pki.ClientCert, pki.ClientKey)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	tr := &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	req, err := http.NewRequest("GET", r.scheme+"://"+addr+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.user != "" {
		req.SetBasicAuth(r.user, r.pass)
	}
	resp, err := client.Do(req)
	if err != nil {
		return outcome{Failed: true}
	}
	resp.Body.Close()
	o := outcome{Status: resp.StatusCode, Proto: resp.Proto, FrameOptions: resp.Header.Get("X-Frame-Options"), NoSniff: resp.Header.Get("X-Content-Type-Options")}
	if resp.TLS != nil {
		o.TLSVersion = resp.TLS.Version
	}
	// The realm differs (the toolkit sends none); the scheme must not.
	if a := resp.Header.Get("WWW-Authenticate"); a != "" {
		o.Auth = strings.Fields(a)[0]
	}
	return o
}

// serveToolkit serves h with exporter-toolkit's web.ListenAndServe and
// the web configuration file at path on a free loopback port, and returns
// its address once it answers.
func serveToolkit(t *testing.T, h http.Handler, path string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() {
		done <- web.ListenAndServe(srv, &web.FlagConfig{WebListenAddresses: &[]string{addr}, WebConfigFile: &path}, slog.New(slog.DiscardHandler))
	}()
	t.Cleanup(func() {
		_ = srv.Close()
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("exporter-toolkit's server: %v", err)
		}
	})
	for range 300 {
		select {
		case err := <-done:
			done <- err // for the cleanup
			t.Fatalf("exporter-toolkit's server on %s: %v", addr, err)
		default:
		}
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("exporter-toolkit's server does not listen on %s", addr)
	return ""
}

// The same web configuration file served by exporter-toolkit's
// web.ListenAndServe and by the exporter: every request — without a
// password, with a wrong one, an unknown user, the right one, with and
// without a client certificate, below the minimum TLS version, plain HTTP
// on the TLS port — gets the same answer from both: failure or status,
// HTTP version, TLS version, the configured headers and the
// authentication scheme asked for.
func TestServeAgreesWithToolkit(t *testing.T) {
	pki := testpki.New(t)
	h, err := bcrypt.GenerateFromPassword([]byte("scrape-secret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	users := "basic_auth_users:\n  prometheus: " + string(h) + "\n"
	tlsKeys := "tls_server_config:\n  cert_file: " + pki.ServerCert + "\n  key_file: " + pki.ServerKey + "\n"
	configs := map[string]string{
		"TLS, basic auth, headers": tlsKeys + users + "http_server_config:\n  headers:\n    X-Frame-Options: deny\n    X-Content-Type-Options: nosniff\n",
		"TLS 1.3 only, HTTP/1.1":   tlsKeys + "  min_version: TLS13\n" + users + "http_server_config:\n  http2: false\n",
		"client certificates":      tlsKeys + "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: " + pki.CA + "\n" + users,
		"TLS 1.2 at most":          tlsKeys + "  max_version: TLS12\n  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256]\n" + users,
	}
	requests := []webRequest{
		{name: "no password", scheme: "https"},
		{name: "wrong password", scheme: "https", user: "prometheus", pass: "wrong"},
		{name: "unknown user", scheme: "https", user: "grafana", pass: "scrape-secret"},
		{name: "right password", scheme: "https", user: "prometheus", pass: "scrape-secret"},
		{name: "right password, client certificate", scheme: "https", user: "prometheus", pass: "scrape-secret", clientCert: true},
		{name: "client certificate, no password", scheme: "https", clientCert: true},
		{name: "right password, TLS 1.2 client", scheme: "https", user: "prometheus", pass: "scrape-secret", clientCert: true, maxTLS: tls.VersionTLS12},
		{name: "plain HTTP", scheme: "http", user: "prometheus", pass: "scrape-secret"},
	}
	seen := map[string]bool{}
	for name, body := range configs {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "web.yml")
			if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := web.Validate(path); err != nil {
				t.Fatalf("exporter-toolkit refuses the file: %v", err)
			}
			cfg, err := webconfig.Load(path)
			if err != nil {
				t.Fatalf("webconfig refuses the file: %v", err)
			}
			store, take := memoryStore(t)
			take("nightly", time.Hour)
			e, err := New([]Target{memoryTarget("jobs", store, nil, nil)}, Options{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- e.Serve(ctx, l, cfg) }()
			t.Cleanup(func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("Serve: %v", err)
				}
			})
			toolkit := serveToolkit(t, e.Handler(), path)
			for _, r := range requests {
				theirs, ours := r.do(t, toolkit, pki), r.do(t, l.Addr().String(), pki)
				if theirs != ours {
					t.Errorf("%s: exporter-toolkit: %v; schedlock: %v", r.name, theirs, ours)
					continue
				}
				t.Logf("%-40s both: %v", r.name, ours)
				seen[ours.String()] = true
			}
		})
	}
	// The requests tell the servers' answers apart: some fail, some are
	// refused, some served.
	var failed, refused, served bool
	for s := range seen {
		failed = failed || s == "request failed"
		refused = refused || strings.HasPrefix(s, "401 ")
		served = served || strings.HasPrefix(s, "200 ")
	}
	if !failed || !refused || !served {
		t.Errorf("the requests saw only %v", seen)
	}
}
