// Package testpki makes the certificates of the TLS tests: a CA of the
// test's own and the server and client certificates it signs, as files.
// Tests only.
package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Files are a CA of the test's own and the certificates it signed for
// 127.0.0.1: a server's and a client's, each with its key, as PEM files.
type Files struct {
	CA, ServerCert, ServerKey, ClientCert, ClientKey string
}

// New writes a fresh CA and its server and client certificates (valid
// for an hour either side of now) to a temporary directory of t's.
func New(t testing.TB) Files {
	t.Helper()
	dir := t.TempDir()
	write := func(name, kind string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	caKey := key()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "schedlock test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leaf := func(serial int64, usage ...x509.ExtKeyUsage) (certDER, keyDER []byte) {
		k := key()
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "127.0.0.1"},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: usage,
			KeyUsage: x509.KeyUsageDigitalSignature}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kd, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return der, kd
	}
	// A server may dial itself (etcd's gateway does) with its own.
	sc, sk := leaf(2, x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth)
	cc, ck := leaf(3, x509.ExtKeyUsageClientAuth)
	return Files{
		CA:         write("ca.pem", "CERTIFICATE", caDER),
		ServerCert: write("server.pem", "CERTIFICATE", sc), ServerKey: write("server-key.pem", "EC PRIVATE KEY", sk),
		ClientCert: write("client.pem", "CERTIFICATE", cc), ClientKey: write("client-key.pem", "EC PRIVATE KEY", ck),
	}
}
