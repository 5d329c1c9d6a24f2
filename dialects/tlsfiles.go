package dialects

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"strings"
)

// TLSFiles are the files a TLS DSN may name (etcds://, rediss://): the CA
// certificates to verify the servers with (CA, PEM; empty: the system's)
// and a client certificate and its key (Cert and Key, both or neither).
type TLSFiles struct {
	CA, Cert, Key string
}

// Check reports a client certificate given without its key, or a key
// without its certificate, as ErrInvalid.
func (f TLSFiles) Check() error {
	if (f.Cert == "") != (f.Key == "") {
		return Invalidf("a client certificate needs both cert and key")
	}
	return nil
}

// Apply reads the files into t (a nil t gets a new configuration of TLS
// 1.2 at least) and returns it. Files that cannot be read or parsed are
// ErrInvalid, naming the file.
func (f TLSFiles) Apply(t *tls.Config) (*tls.Config, error) {
	if err := f.Check(); err != nil {
		return nil, err
	}
	if t == nil {
		t = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if f.CA != "" {
		pem, err := os.ReadFile(f.CA)
		if err != nil {
			return nil, Invalidf("read the CA certificate: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, Invalidf("the CA file %s holds no PEM certificate", f.CA)
		}
		t.RootCAs = pool
	}
	if f.Cert != "" {
		cert, err := tls.LoadX509KeyPair(f.Cert, f.Key)
		if err != nil {
			return nil, Invalidf("load the client certificate: %v", err)
		}
		t.Certificates = []tls.Certificate{cert}
	}
	return t, nil
}

// ClientCertRefused reports a TLS handshake the server ended because of
// the client's certificate — none given ("certificate required") or one
// its CA did not sign ("bad certificate") — where the fix is a client
// certificate (Cert, Key), not the CA.
func ClientCertRefused(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "certificate required") || strings.Contains(msg, "bad certificate")
}
