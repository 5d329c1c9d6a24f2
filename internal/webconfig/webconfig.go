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
// (11.6 MB more on schedlock, docs/monitoring.md; main_test.go's TestBinary
// refuses it). toolkit_test.go holds it to exporter-toolkit's own loading
// and serving, file by file. The keys it does not implement (the inline
// cert, key and client_ca, client_allowed_sans, rate_limit) are refused,
// by name, rather than silently ignored.
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
	"slices"
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
	// CipherSuites are Go's names of its secure suites (tls.CipherSuites);
	// empty: Go's default. TLS 1.3 suites are not configurable.
	CipherSuites []string `yaml:"cipher_suites"`
	// CurvePreferences: CurveP256, CurveP384, CurveP521, X25519.
	CurvePreferences []string `yaml:"curve_preferences"`
	// PreferServerCipherSuites is read and ignored, as exporter-toolkit
	// does: Go has chosen the suite itself since Go 1.17.
	PreferServerCipherSuites bool `yaml:"prefer_server_cipher_suites"`

	Cert              any `yaml:"cert"`
	Key               any `yaml:"key"`
	ClientCA          any `yaml:"client_ca"`
	ClientAllowedSans any `yaml:"client_allowed_sans"`
}

// HTTPServerConfig is http_server_config.
type HTTPServerConfig struct {
	// HTTP2 false serves HTTP/1.1 only over TLS; default true.
	HTTP2 *bool `yaml:"http2"`
	// Headers are set on every response behind the file; only the
	// headers (and, where listed, values) of allowedHeaders.
	Headers map[string]string `yaml:"headers"`
}

// allowedHeaders are the response headers http_server_config.headers may
// set, with the values allowed (nil: any), as exporter-toolkit allows
// them (web/handler.go, extraHTTPHeaders).
var allowedHeaders = map[string][]string{
	"Strict-Transport-Security": nil,
	"X-Content-Type-Options":    {"nosniff"},
	"X-Frame-Options":           {"deny", "sameorigin"},
	"X-XSS-Protection":          nil,
	"Content-Security-Policy":   nil,
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
	if h := c.HTTPServerConfig; h != nil {
		for k, v := range h.Headers {
			values, ok := allowedHeaders[k]
			switch {
			case !ok:
				return fmt.Errorf("http_server_config: headers: %q cannot be set (only Strict-Transport-Security, X-Content-Type-Options, X-Frame-Options, X-XSS-Protection, Content-Security-Policy)", k)
			case values != nil && !slices.Contains(values, v):
				return fmt.Errorf("http_server_config: headers: %s %q is not one of %q", k, v, values)
			}
		}
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
	for key, v := range map[string]any{"cert": t.Cert, "key": t.Key, "client_ca": t.ClientCA, "client_allowed_sans": t.ClientAllowedSans} {
		if v != nil {
			return fmt.Errorf("tls_server_config: %s is not supported (use cert_file, key_file, client_ca_file, client_auth_type, min_version, max_version, cipher_suites, curve_preferences)", key)
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
	for _, name := range t.CipherSuites {
		i := slices.IndexFunc(tls.CipherSuites(), func(s *tls.CipherSuite) bool { return s.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("tls_server_config: cipher_suites: %q is not one of Go's secure cipher suites", name)
		}
		cfg.CipherSuites = append(cfg.CipherSuites, tls.CipherSuites()[i].ID)
	}
	for _, name := range t.CurvePreferences {
		id, ok := curves[name]
		if !ok {
			return nil, fmt.Errorf("tls_server_config: curve_preferences: %q is not one of CurveP256, CurveP384, CurveP521, X25519", name)
		}
		cfg.CurvePreferences = append(cfg.CurvePreferences, id)
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
	case t.ClientCAFile != "" && auth == tls.NoClientCert:
		return nil, errors.New("tls_server_config: client_ca_file is set without a client_auth_type")
	}
	// VerifyClientCertIfGiven and RequireAndVerifyClientCert without a
	// client_ca_file verify client certificates against the system's
	// roots, as exporter-toolkit does (its own example files rely on it).
	cfg.ClientAuth = auth
	return cfg, nil
}

var curves = map[string]tls.CurveID{"CurveP256": tls.CurveP256, "CurveP384": tls.CurveP384, "CurveP521": tls.CurveP521, "X25519": tls.X25519}

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

// HTTP2 reports whether HTTP/2 is offered over TLS: true unless
// http_server_config.http2 is false.
func (c *Config) HTTP2() bool {
	return c == nil || c.HTTPServerConfig == nil || c.HTTPServerConfig.HTTP2 == nil || *c.HTTPServerConfig.HTTP2
}

// Configure applies the file to srv: its TLS configuration (nil without
// tls_server_config) and, with http2: false, HTTP/1.1 only.
func (c *Config) Configure(srv *http.Server) error {
	cfg, err := c.TLS()
	if err != nil {
		return err
	}
	srv.TLSConfig = cfg
	if cfg != nil && !c.HTTP2() {
		srv.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){}
	}
	return nil
}

// Wrap sets the file's http_server_config.headers on every response of h
// and asks for basic authentication before h when the file lists users;
// without either it returns h.
func (c *Config) Wrap(h http.Handler) http.Handler {
	if c == nil {
		return h
	}
	var headers map[string]string
	if c.HTTPServerConfig != nil {
		headers = c.HTTPServerConfig.Headers
	}
	if len(c.BasicAuthUsers) == 0 && len(headers) == 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		if len(c.BasicAuthUsers) == 0 {
			h.ServeHTTP(w, r)
			return
		}
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
