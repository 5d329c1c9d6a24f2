package cmd

import (
	"strings"
	"testing"

	"github.com/schedlock/schedlock/internal/testnet"
)

// A store whose port refuses connections says so in one line, as a
// database does: etcd's client retries a refused dial until its dial
// timeout and would only say that no member answered.
func TestStoresSayConnectionRefused(t *testing.T) {
	for _, scheme := range []string{"redis", "etcd", "zk"} {
		t.Run(scheme, func(t *testing.T) {
			dsn := scheme + "://" + testnet.FreeAddr(t) + "/x"
			if scheme == "redis" {
				dsn = strings.TrimSuffix(dsn, "x") + "0"
			}
			r := runCmd(t, false, nil, "run", "--dsn", dsn, "--name", "refused", "--", "true")
			if code := exitCodeOf(r.err); code != CodeError {
				t.Fatalf("exit %d (%v), want %d", code, r.err, CodeError)
			}
			if msg := r.err.Error(); !strings.Contains(msg, "connection refused — is the server running?") {
				t.Errorf("error %q: want it to say the connection was refused", msg)
			}
		})
	}
}
