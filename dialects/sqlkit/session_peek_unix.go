//go:build unix

package sqlkit

import (
	"errors"
	"net"
	"os"
	"syscall"
)

// sockState is what a blocking read of an idle lock connection found.
type sockState int

const (
	sockQuiet  sockState = iota // the read deadline passed (or was moved to now)
	sockData                    // the server sent bytes nobody asked for
	sockClosed                  // end of stream or a socket error
)

// canWatch reports whether nc's socket can be read without consuming
// anything (a TCP or Unix socket, possibly under TLS).
func canWatch(nc net.Conn) bool {
	_, ok := rawSocket(nc)
	return ok
}

// rawSocket returns the syscall.RawConn under nc, unwrapping TLS.
func rawSocket(nc net.Conn) (syscall.RawConn, bool) {
	for range 4 {
		if sc, ok := nc.(syscall.Conn); ok {
			rc, err := sc.SyscallConn()
			return rc, err == nil
		}
		u, ok := nc.(interface{ NetConn() net.Conn })
		if !ok {
			return nil, false
		}
		nc = u.NetConn()
	}
	return nil, false
}

// peek blocks until nc's socket is readable or its read deadline passes,
// and looks at the first byte without taking it (MSG_PEEK), so the driver
// later reads everything the server sent.
func peek(nc net.Conn) (sockState, error) {
	rc, ok := rawSocket(nc)
	if !ok {
		return sockQuiet, nil
	}
	var n int
	var perr error
	err := rc.Read(func(fd uintptr) bool {
		var b [1]byte
		n, _, perr = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return !errors.Is(perr, syscall.EAGAIN) && !errors.Is(perr, syscall.EWOULDBLOCK) && !errors.Is(perr, syscall.EINTR)
	})
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return sockQuiet, nil
	case err != nil:
		return sockClosed, err
	case perr != nil:
		return sockClosed, perr
	case n == 0:
		return sockClosed, errors.New("end of stream")
	}
	return sockData, nil
}
