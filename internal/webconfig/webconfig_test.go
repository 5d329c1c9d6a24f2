package webconfig

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/schedlock/schedlock/internal/testpki"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadRefuses(t *testing.T) {
	pki := testpki.New(t)
	cases := map[string]string{
		"basic_auth_users:\n  prometheus: plain-text\n":                                                                                            "not a bcrypt hash",
		"tls_server_config:\n  cert_file: /nonexistent/c.pem\n  key_file: /nonexistent/k.pem\n":                                                    "cannot load cert_file",
		"tls_server_config:\n  key_file: " + pki.ServerKey + "\n":                                                                                  "cert_file is missing",
		"tls_server_config:\n  cert_file: " + pki.ServerCert + "\n  key_file: " + pki.ServerKey + "\n  min_version: TLS9\n":                        "min_version",
		"tls_server_config:\n  cert_file: " + pki.ServerCert + "\n  key_file: " + pki.ServerKey + "\n  cipher_suites: [TLS_AES_512_GCM_SHA1024]\n": "cipher_suites",
		"tls_server_config:\n  cert_file: " + pki.ServerCert + "\n  key_file: " + pki.ServerKey + "\n  client_ca_file: " + pki.CA + "\n":           "without a client_auth_type",
		"basic_auth_user:\n  a: b\n": "field basic_auth_user not found",
		"rate_limit:\n  burst: 1\n":  "rate_limit is not supported",
	}
	for body, want := range cases {
		_, err := Load(writeConfig(t, body))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Load(%q) = %v, want %q", body, err, want)
		}
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.yml")); err == nil {
		t.Error("a missing file loads")
	}
	if c, err := Load(""); c != nil || err != nil {
		t.Errorf("Load(\"\") = %v, %v", c, err)
	}
}

// A server with the file serves TLS with the file's certificate and asks
// for the password, whose hash it checks.
func TestTLSAndBasicAuth(t *testing.T) {
	pki := testpki.New(t)
	h, err := bcrypt.GenerateFromPassword([]byte("scrape-secret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	hash := string(h)
	c, err := Load(writeConfig(t, "tls_server_config:\n  cert_file: "+pki.ServerCert+"\n  key_file: "+pki.ServerKey+
		"\nbasic_auth_users:\n  prometheus: "+hash+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	tlsConfig, err := c.TLS()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{TLSConfig: tlsConfig, Handler: c.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("in")) }))}
	go func() { _ = srv.ServeTLS(l, "", "") }()
	defer srv.Close()

	caPEM, err := os.ReadFile(pki.CA)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	get := func(user, pass string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", "https://"+l.Addr().String()+"/", nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct {
		user, pass string
		code       int
	}{{"", "", 401}, {"prometheus", "wrong", 401}, {"nobody", "scrape-secret", 401}, {"prometheus", "scrape-secret", 200}, {"prometheus", "scrape-secret", 200}} {
		if got := get(tc.user, tc.pass); got != tc.code {
			t.Errorf("%q:%q → %d, want %d", tc.user, tc.pass, got, tc.code)
		}
	}
	// Plain HTTP on a TLS port is refused.
	resp, err := http.Get("http://" + l.Addr().String() + "/")
	if err == nil {
		if resp.StatusCode == 200 {
			t.Error("plain HTTP served")
		}
		resp.Body.Close()
	}
}
