// Package webconfig reads a Prometheus web configuration file — the file
// of node_exporter's --web.config.file, documented with
// prometheus/exporter-toolkit — and applies it to an HTTP server: TLS
// (certificate and key, client certificates, TLS versions) and basic
// authentication with bcrypt-hashed passwords.
//
// It reads the same YAML keys as exporter-toolkit instead of linking it:
// exporter-toolkit's web package imports prometheus/common/config, which
// links golang.org/x/net/trace and with it html/template, whose
// method-by-name evaluation keeps every exported method of the binary
// (12.5 MB more on schedlock, main_test.go's TestBinary refuses it). The
// keys it does not implement (cipher_suites, curve_preferences,
// client_allowed_sans, rate_limit, http2, headers) are refused, by name,
// rather than silently ignored.
package webconfig

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"

	"go.yaml.in/yaml/v3"
	"golang.org/x/crypto/bcrypt"
)

// Config is a loaded web configuration file.
type Config struct {
	TLSServerConfig  *TLSServerConfig  `yaml:"tls_server_config"`
	HTTPServerConfig *HTTPServerConfig `yaml:"http_server_config"`
	BasicAuthUsers   map[string]string `yaml:"basic_auth_users"`

	// RateLimit and the unsupported TLS keys are read only to refuse them.
	RateLimit any `yaml:"rate_limit"`

	dir string // the file's directory: relative paths are relative to it

	authMu sync.Mutex      // one bcrypt comparison at a time: each costs tens of milliseconds
	authOK map[string]bool // sha256(user, password) of credentials that passed
}

// TLSServerConfig is tls_server_config.
type TLSServerConfig struct {
	CertFile       string `yaml:"cert_file"`
	KeyFile        string `yaml:"key_file"`
	ClientCAFile   string `yaml:"client_ca_file"`
	ClientAuthType string `yaml:"client_auth_type"`
	MinVersion     string `yaml:"min_version"`
	MaxVersion     string `yaml:"max_version"`

	Cert                     any `yaml:"cert"`
	Key                      any `yaml:"key"`
	ClientCA                 any `yaml:"client_ca"`
	CipherSuites             any `yaml:"cipher_suites"`
	CurvePreferences         any `yaml:"curve_preferences"`
	PreferServerCipherSuites any `yaml:"prefer_server_cipher_suites"`
	ClientAllowedSans        any `yaml:"client_allowed_sans"`
}

// HTTPServerConfig is http_server_config; none of its keys is supported.
type HTTPServerConfig struct {
	HTTP2   any `yaml:"http2"`
	Headers any `yaml:"headers"`
}

// maxFile bounds a web configuration file.
const maxFile = 1 << 20

// Load reads and checks the file at path: its YAML (unknown keys are
// errors), every password hash (bcrypt), and the certificate, key and
// client CA it names, which must load. "" is no file: a nil Config, plain
// HTTP without authentication.
func Load(path string) (*Config, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFile {
		return nil, fmt.Errorf("larger than %d KiB", maxFile>>10)
	}
	c := &Config{dir: filepath.Dir(path)}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	return c, nil
}

// check refuses what is not supported and loads what is named.
func (c *Config) check() error {
	if c.RateLimit != nil {
		return errors.New("rate_limit is not supported")
	}
	if h := c.HTTPServerConfig; h != nil && (h.HTTP2 != nil || h.Headers != nil) {
		return errors.New("http_server_config is not supported")
	}
	for user, hash := range c.BasicAuthUsers {
		if _, err := bcrypt.Cost([]byte(hash)); err != nil {
			return fmt.Errorf("basic_auth_users: the password of %q is not a bcrypt hash (make one with htpasswd -nBC 10 \"\" | tr -d ':\\n'): %w", user, err)
		}
	}
	if c.TLSServerConfig == nil {
		return nil
	}
	t := c.TLSServerConfig
	for key, v := range map[string]any{"cert": t.Cert, "key": t.Key, "client_ca": t.ClientCA, "cipher_suites": t.CipherSuites,
		"curve_preferences": t.CurvePreferences, "prefer_server_cipher_suites": t.PreferServerCipherSuites, "client_allowed_sans": t.ClientAllowedSans} {
		if v != nil {
			return fmt.Errorf("tls_server_config: %s is not supported (use cert_file, key_file, client_ca_file, client_auth_type, min_version, max_version)", key)
		}
	}
	switch {
	case t.CertFile == "":
		return errors.New("tls_server_config: cert_file is missing")
	case t.KeyFile == "":
		return errors.New("tls_server_config: key_file is missing")
	}
	_, err := c.TLS()
	return err
}

// TLS is the server's TLS configuration, nil without tls_server_config.
// The certificate and key are read again for every new connection, so a
// renewed certificate is served without a restart.
func (c *Config) TLS() (*tls.Config, error) {
	if c == nil || c.TLSServerConfig == nil {
		return nil, nil
	}
	t := c.TLSServerConfig
	load := func() (*tls.Certificate, error) {
		cert, err := tls.LoadX509KeyPair(c.path(t.CertFile), c.path(t.KeyFile))
		if err != nil {
			return nil, fmt.Errorf("tls_server_config: cannot load cert_file %s and key_file %s: %w", t.CertFile, t.KeyFile, err)
		}
		return &cert, nil
	}
	if _, err := load(); err != nil {
		return nil, err
	}
	cfg := &tls.Config{GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return load() }}
	var err error
	if cfg.MinVersion, err = tlsVersion("min_version", t.MinVersion, tls.VersionTLS12); err != nil {
		return nil, err
	}
	if cfg.MaxVersion, err = tlsVersion("max_version", t.MaxVersion, tls.VersionTLS13); err != nil {
		return nil, err
	}
	if t.ClientCAFile != "" {
		pem, err := os.ReadFile(c.path(t.ClientCAFile))
		if err != nil {
			return nil, fmt.Errorf("tls_server_config: client_ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls_server_config: client_ca_file %s holds no PEM certificate", t.ClientCAFile)
		}
		cfg.ClientCAs = pool
	}
	auth, ok := clientAuthTypes[t.ClientAuthType]
	switch {
	case !ok:
		return nil, fmt.Errorf("tls_server_config: client_auth_type %q is not one of NoClientCert, RequestClientCert, RequireAnyClientCert, VerifyClientCertIfGiven, RequireAndVerifyClientCert", t.ClientAuthType)
	case t.ClientCAFile != "" && t.ClientAuthType == "":
		return nil, errors.New("tls_server_config: client_ca_file is set without a client_auth_type")
	case (auth == tls.VerifyClientCertIfGiven || auth == tls.RequireAndVerifyClientCert) && t.ClientCAFile == "":
		return nil, fmt.Errorf("tls_server_config: client_auth_type %s needs a client_ca_file", t.ClientAuthType)
	}
	cfg.ClientAuth = auth
	return cfg, nil
}

var clientAuthTypes = map[string]tls.ClientAuthType{
	"": tls.NoClientCert, "NoClientCert": tls.NoClientCert, "RequestClientCert": tls.RequestClientCert,
	"RequireAnyClientCert": tls.RequireAnyClientCert, "RequireClientCert": tls.RequireAnyClientCert,
	"VerifyClientCertIfGiven": tls.VerifyClientCertIfGiven, "RequireAndVerifyClientCert": tls.RequireAndVerifyClientCert,
}

func tlsVersion(key, v string, def uint16) (uint16, error) {
	versions := map[string]uint16{"": def, "TLS10": tls.VersionTLS10, "TLS11": tls.VersionTLS11, "TLS12": tls.VersionTLS12, "TLS13": tls.VersionTLS13}
	n, ok := versions[v]
	if !ok {
		return 0, fmt.Errorf("tls_server_config: %s %q is not one of TLS10, TLS11, TLS12, TLS13", key, v)
	}
	return n, nil
}

func (c *Config) path(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(c.dir, p)
}

// Wrap asks for basic authentication before h when the file lists users;
// else it returns h.
func (c *Config) Wrap(h http.Handler) http.Handler {
	if c == nil || len(c.BasicAuthUsers) == 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if ok && c.authorized(user, pass) {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="schedlock", charset="UTF-8"`)
		http.Error(w, http.StatusText(http.StatusUnauthorized), http.StatusUnauthorized)
	})
}

// dummyHash is compared against for an unknown user, so that the answer
// takes as long as for a known one.
var dummyHash = []byte("$2a$10$U.2GwWS7y2viOyVTi0Eta.IVjLrq.PRefSkvgIWVFdAinL4zPgRz.")

// maxAuthCache bounds the credentials remembered as good.
const maxAuthCache = 256

// authorized checks user and pass against the file, remembering good
// credentials (their SHA-256) so that a scrape every few seconds does not
// pay bcrypt's cost each time.
func (c *Config) authorized(user, pass string) bool {
	sum := sha256.Sum256([]byte(user + "\x00" + pass))
	key := string(sum[:])
	c.authMu.Lock()
	defer c.authMu.Unlock()
	if c.authOK[key] {
		return true
	}
	hash, known := c.BasicAuthUsers[user]
	h := dummyHash
	if known {
		h = []byte(hash)
	}
	ok := bcrypt.CompareHashAndPassword(h, []byte(pass)) == nil && known
	if ok {
		if c.authOK == nil || len(c.authOK) >= maxAuthCache {
			c.authOK = map[string]bool{}
		}
		c.authOK[key] = true
	}
	return ok
}
