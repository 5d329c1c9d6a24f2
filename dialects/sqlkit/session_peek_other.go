//go:build !unix

package sqlkit

import "net"

type sockState int

const (
	sockQuiet sockState = iota
	sockData
	sockClosed
)

// canWatch is false where no socket can be read without consuming it: an
// idle lock connection is then watched by its pings alone.
func canWatch(net.Conn) bool { return false }

func peek(net.Conn) (sockState, error) { return sockQuiet, nil }
