package webconfig

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/exporter-toolkit/web"
	"golang.org/x/crypto/bcrypt"

	"github.com/schedlock/schedlock/internal/testpki"
)

// The files Load refuses on purpose though exporter-toolkit's
// web.Validate accepts them, each with the reason. Everything else must
// be accepted or refused by both alike.
var refusedOnPurpose = map[string]string{
	// keys not implemented: refused by name rather than ignored
	"inline cert and key": "cert/key inline are not supported",
	"inline client_ca":    "client_ca inline is not supported",
	"client_allowed_sans": "client_allowed_sans is not supported",
	"rate_limit":          "rate_limit is not supported",
	"tls_config_noAuth.requireanyclientcertkeyinline.good.yml": "key inline is not supported",
	"web_config_noAuth_tlsInline.good.yml":                     "cert/key inline are not supported",
	"web_config_auth_client_san.good.yaml":                     "client_allowed_sans is not supported",
	"web_config_auth_client_san.bad.yaml":                      "client_allowed_sans is not supported",
	"web_config_rate_limiter_nonblocking.yaml":                 "rate_limit is not supported",
	"web_config_rate_limiter_one_second.yaml":                  "rate_limit is not supported",
	// stricter on purpose: what the toolkit accepts here serves something
	// else than the file seems to ask for
	"tls_server_config without cert_file":  "the toolkit serves plain HTTP when tls_server_config names no certificate",
	"client_ca_file without a certificate": "the toolkit then trusts no client certificate at all",
}

// toolkitDir is exporter-toolkit's module directory, for its test files.
func toolkitDir(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/prometheus/exporter-toolkit").Output()
	if err != nil {
		t.Fatalf("go list -m github.com/prometheus/exporter-toolkit: %v", err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		t.Fatal("go list -m github.com/prometheus/exporter-toolkit: no module directory (go mod download)")
	}
	return dir
}

// compare loads path with web.Validate and with Load, and fails when one
// accepts what the other refuses, but for refusedOnPurpose.
func compare(t *testing.T, name, path string) {
	t.Helper()
	theirs := web.Validate(path)
	_, ours := Load(path)
	why, onPurpose := refusedOnPurpose[name]
	switch {
	case onPurpose && (theirs != nil || ours == nil):
		t.Errorf("%s: listed as refused on purpose (%s), but exporter-toolkit: %v; schedlock: %v", name, why, theirs, ours)
	case !onPurpose && (theirs == nil) != (ours == nil):
		t.Errorf("%s: exporter-toolkit: %v; schedlock: %v", name, theirs, ours)
	default:
		t.Logf("%-45s toolkit: %-8v schedlock: %v", name, verdict(theirs), verdict(ours))
	}
}

func verdict(err error) string {
	if err == nil {
		return "accepts"
	}
	return "refuses (" + err.Error() + ")"
}

// Every web configuration file of exporter-toolkit's own tests
// (web/testdata), in its directory so that its relative paths resolve,
// is accepted or refused by Load as by the toolkit's web.Validate.
func TestToolkitTestdataAgrees(t *testing.T) {
	dir := filepath.Join(toolkitDir(t), "web", "testdata")
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if ext := filepath.Ext(f.Name()); ext != ".yml" && ext != ".yaml" {
			continue
		}
		n++
		compare(t, f.Name(), filepath.Join(dir, f.Name()))
	}
	if n < 30 {
		t.Fatalf("only %d configuration files in %s", n, dir)
	}
	for name := range refusedOnPurpose {
		if strings.HasSuffix(name, ".yml") || strings.HasSuffix(name, ".yaml") {
			if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
				t.Errorf("refusedOnPurpose names %s, which is not in %s", name, dir)
			}
		}
	}
}

// toolkitCases are web configuration files, valid and not, written with
// the test's own certificates; %s is replaced by the certificates' paths.
func toolkitCases(t *testing.T) map[string]string {
	pki := testpki.New(t)
	h, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	hash := string(h)
	tlsKeys := "tls_server_config:\n  cert_file: " + pki.ServerCert + "\n  key_file: " + pki.ServerKey + "\n"
	withTLS := func(extra string) string { return tlsKeys + extra }
	return map[string]string{
		// valid
		"empty file":                            "",
		"users only":                            "basic_auth_users:\n  prometheus: " + hash + "\n",
		"tls":                                   tlsKeys,
		"tls and users":                         withTLS("basic_auth_users:\n  prometheus: " + hash + "\n  grafana: " + hash + "\n"),
		"min_version TLS13":                     withTLS("  min_version: TLS13\n"),
		"TLS10 to TLS11":                        withTLS("  min_version: TLS10\n  max_version: TLS11\n"),
		"min above max":                         withTLS("  min_version: TLS13\n  max_version: TLS12\n"),
		"NoClientCert":                          withTLS("  client_auth_type: NoClientCert\n"),
		"RequestClientCert":                     withTLS("  client_auth_type: RequestClientCert\n"),
		"RequireAnyClientCert":                  withTLS("  client_auth_type: RequireAnyClientCert\n"),
		"RequireClientCert (old name)":          withTLS("  client_auth_type: RequireClientCert\n"),
		"VerifyClientCertIfGiven":               withTLS("  client_auth_type: VerifyClientCertIfGiven\n  client_ca_file: " + pki.CA + "\n"),
		"VerifyClientCertIfGiven without CA":    withTLS("  client_auth_type: VerifyClientCertIfGiven\n"),
		"RequireAndVerifyClientCert without CA": withTLS("  client_auth_type: RequireAndVerifyClientCert\n"),
		"RequireAndVerifyClientCert":            withTLS("  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: " + pki.CA + "\n"),
		"cipher_suites":                         withTLS("  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256]\n  max_version: TLS12\n"),
		"curve_preferences":                     withTLS("  curve_preferences: [X25519, CurveP256]\n"),
		"prefer_server_cipher_suites":           withTLS("  prefer_server_cipher_suites: false\n"),
		"headers":                               "http_server_config:\n  headers:\n    X-Frame-Options: sameorigin\n    X-Content-Type-Options: nosniff\n    Strict-Transport-Security: max-age=31536000\n    Content-Security-Policy: default-src 'self'\n    X-XSS-Protection: \"0\"\n",
		"http2 false":                           withTLS("http_server_config:\n  http2: false\n"),
		// invalid
		"bad bcrypt hash":                  "basic_auth_users:\n  prometheus: plain-text\n",
		"truncated bcrypt hash":            "basic_auth_users:\n  prometheus: " + hash[:20] + "\n",
		"users as a list":                  "basic_auth_users:\n  - prometheus\n",
		"missing cert file":                "tls_server_config:\n  cert_file: " + pki.ServerCert + ".gone\n  key_file: " + pki.ServerKey + "\n",
		"missing key file":                 "tls_server_config:\n  cert_file: " + pki.ServerCert + "\n  key_file: " + pki.ServerKey + ".gone\n",
		"key_file without cert_file":       "tls_server_config:\n  key_file: " + pki.ServerKey + "\n",
		"cert_file without key_file":       "tls_server_config:\n  cert_file: " + pki.ServerCert + "\n",
		"key of another certificate":       "tls_server_config:\n  cert_file: " + pki.ServerCert + "\n  key_file: " + pki.ClientKey + "\n",
		"certificate as key":               "tls_server_config:\n  cert_file: " + pki.ServerCert + "\n  key_file: " + pki.ServerCert + "\n",
		"min_version TLS9":                 withTLS("  min_version: TLS9\n"),
		"min_version tls12":                withTLS("  min_version: tls12\n"),
		"max_version SSL30":                withTLS("  max_version: SSL30\n"),
		"client_auth_type Always":          withTLS("  client_auth_type: Always\n"),
		"client_ca_file without auth type": withTLS("  client_ca_file: " + pki.CA + "\n"),
		"client_ca_file missing":           withTLS("  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: " + pki.CA + ".gone\n"),
		"unknown top-level key":            "basic_auth_user:\n  a: b\n",
		"unknown tls key":                  withTLS("  certfile: x\n"),
		"unknown http key":                 "http_server_config:\n  http3: true\n",
		"header not allowed":               "http_server_config:\n  headers:\n    Server: schedlock\n",
		"X-Frame-Options allow":            "http_server_config:\n  headers:\n    X-Frame-Options: allow\n",
		"X-Content-Type-Options sniff":     "http_server_config:\n  headers:\n    X-Content-Type-Options: sniff\n",
		"invented cipher":                  withTLS("  cipher_suites: [TLS_INVENTED_WITH_AES]\n"),
		"insecure cipher":                  withTLS("  cipher_suites: [TLS_RSA_WITH_RC4_128_SHA]\n"),
		"invented curve":                   withTLS("  curve_preferences: [CurveP999]\n"),
		"not a mapping":                    "just some text\n",
		"duplicate key":                    "basic_auth_users:\n  a: " + hash + "\nbasic_auth_users:\n  b: " + hash + "\n",
		"http2 not a bool":                 withTLS("http_server_config:\n  http2: sometimes\n"),
		// refused on purpose (refusedOnPurpose)
		"inline cert and key":                  "tls_server_config:\n  cert: |\n" + indent(readFile(t, pki.ServerCert)) + "  key: |\n" + indent(readFile(t, pki.ServerKey)),
		"inline client_ca":                     withTLS("  client_auth_type: RequireAndVerifyClientCert\n  client_ca: |\n" + indent(readFile(t, pki.CA))),
		"client_allowed_sans":                  withTLS("  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: " + pki.CA + "\n  client_allowed_sans: [127.0.0.1]\n"),
		"rate_limit":                           "rate_limit:\n  burst: 10\n  interval: 1s\n",
		"tls_server_config without cert_file":  "tls_server_config:\n  min_version: TLS13\n",
		"client_ca_file without a certificate": withTLS("  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: /dev/null\n"),
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func indent(s string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString("    " + strings.TrimRight(line, "\n") + "\n")
	}
	return b.String()
}

// Files written for schedlock's cases — bad bcrypt hashes, missing or
// mismatched certificates, unknown keys, TLS versions, every
// client_auth_type, basic_auth_users, http_server_config's headers and
// http2 — are accepted or refused by Load as by exporter-toolkit's
// web.Validate, but for the ones refused on purpose.
func TestToolkitAgrees(t *testing.T) {
	cases := toolkitCases(t)
	for name := range refusedOnPurpose {
		if !strings.HasSuffix(name, ".yml") && !strings.HasSuffix(name, ".yaml") {
			if _, ok := cases[name]; !ok {
				t.Errorf("refusedOnPurpose names %q, which is no case", name)
			}
		}
	}
	names := make([]string, 0, len(cases))
	for name := range cases {
		names = append(names, name)
	}
	slices.Sort(names)
	accepted := 0
	for _, name := range names {
		path := writeConfig(t, cases[name])
		if web.Validate(path) == nil {
			accepted++
		}
		compare(t, name, path)
	}
	if accepted == 0 || accepted == len(cases) {
		t.Fatalf("exporter-toolkit accepts %d of %d cases: the cases test nothing", accepted, len(cases))
	}
}

// exporter-toolkit is for these tests only: the schedlock binary does not
// link it (its web package brings html/template, and with it every
// exported method of the binary; docs/monitoring.md).
func TestToolkitNotInBinary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-tags", "grpcnotrace", "github.com/schedlock/schedlock").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/schedlock/schedlock/internal/webconfig") {
		t.Fatalf("go list -deps lists no internal/webconfig: %d packages", len(deps))
	}
	for _, p := range deps {
		if strings.HasPrefix(p, "github.com/prometheus/exporter-toolkit") {
			t.Errorf("the schedlock binary links %s", p)
		}
	}
}
