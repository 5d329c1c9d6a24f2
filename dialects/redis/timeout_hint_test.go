package redis_test

import (
	"net"
	"os"
	"strings"
	"testing"
)

// A dial that ran out of time and a read that did (the server took the
// connection and said nothing) name the URL's own time-out each.
func TestTimeoutHintsNameTheURLsTimeout(t *testing.T) {
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}
	read := &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	if h := connectHintOf(dial); !strings.Contains(h, "dial_timeout=") || strings.Contains(h, "read_timeout") {
		t.Errorf("dial time-out: hint %q", h)
	}
	if h := connectHintOf(read); !strings.Contains(h, "read_timeout=") || !strings.Contains(h, "did not answer") {
		t.Errorf("read time-out: hint %q", h)
	}
}
