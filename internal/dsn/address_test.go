package dsn

import (
	"strings"
	"testing"
)

func TestCheckAddress(t *testing.T) {
	for _, ok := range []string{"", "h", "h:1", "h:65535", "[::1]", "[::1]:2379", "::1", "fe80::1", "[fe80::1%eth0]:6379", "h:"} {
		if err := checkAddress(ok); err != nil {
			t.Errorf("checkAddress(%q): %v", ok, err)
		}
	}
	for in, want := range map[string]string{
		"h:0":       "not a number from 1 to 65535",
		"h:65536":   "not a number from 1 to 65535",
		"h:+1":      "not a number from 1 to 65535",
		"h:1:2":     "is not host:port",
		"[::1":      "no closing ]",
		"[::1]2379": "after ] comes :port",
		"[h]:1":     "only an IPv6 address goes in brackets",
		"[1.2.3.4]": "only an IPv6 address goes in brackets",
		"[::1]:0":   "not a number from 1 to 65535",
	} {
		err := checkAddress(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("checkAddress(%q) = %v, want an error saying %q", in, err, want)
		}
	}
}
