// Package testnet picks loopback ports for the servers the live tests
// start of their own. Tests only.
package testnet

import (
	"net"
	"strconv"
	"testing"
)

// FreeAddr is a 127.0.0.1:port whose port was free a moment ago and that
// nothing listens on: for a server a test starts (which may still lose the
// port to another process; the tests that start servers say so when that
// happens), or for a connection that is refused.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// FreePort is FreeAddr's port.
func FreePort(t testing.TB) int {
	t.Helper()
	_, p, _ := net.SplitHostPort(FreeAddr(t))
	n, _ := strconv.Atoi(p)
	return n
}
