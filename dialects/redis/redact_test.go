package redis

import (
	"context"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/internal/dsn"
	"github.com/schedlock/schedlock/internal/testnet"
)

// Redis URLs of every form keep the password out of the redacted DSN and
// of the connect error.
func TestRedisDSNRedaction(t *testing.T) {
	const secret = "s3cr3t-pw"
	closed := testnet.FreeAddr(t)
	for i, raw := range []string{
		"redis://:" + secret + "@" + closed + "/0",
		"rediss://app:" + secret + "@" + closed + "/1",
		"redis://:" + secret + "@" + closed + ",127.0.0.1:1/0",
		"redis://:" + secret + "@" + closed + ",127.0.0.1:1/0?master=jobs",
		"redis://:" + secret + "@" + closed + "/0?dial_timeout=100ms",
	} {
		d, err := dsn.Parse(raw)
		if err != nil {
			t.Fatalf("%s: %v", strings.ReplaceAll(raw, secret, "***"), err)
		}
		if strings.Contains(d.Redacted(), secret) {
			t.Errorf("redacted DSN shows the password: %s", d.Redacted())
		}
		if i > 0 {
			continue // one connect error is enough: the forms differ only in parsing
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5e9)
		_, err = d.Connect(ctx)
		cancel()
		if err == nil {
			t.Fatalf("%s: connected to a closed port", d.Redacted())
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("connect error shows the password: %v", err)
		}
	}
}
