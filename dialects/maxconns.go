package dialects

import (
	"fmt"
	"strconv"
)

// OptionMaxConns is the x- option (x-max-conns=N, without its prefix) that
// bounds the connections one opened backend keeps to its database or
// store: a SQL backend's database/sql pool (SetMaxOpenConns) and a Redis
// client's pool (per node of a Cluster). etcd and ZooKeeper clients keep
// one connection (per member) whatever it says.
const OptionMaxConns = "max-conns"

// DefaultMaxConns is the connection limit of a backend whose DSN gives no
// x-max-conns: enough for a handle's session lock connections, its table
// statements and a few waiting acquires, and small beside a server's
// max_connections (100 by default on PostgreSQL, 151 on MySQL/MariaDB).
const DefaultMaxConns = 10

// MaxMaxConns bounds x-max-conns.
const MaxMaxConns = 10_000

// ParseMaxConns parses x-max-conns; "" is DefaultMaxConns. A value that
// is not a whole number between 1 and MaxMaxConns is an error.
func ParseMaxConns(s string) (int, error) {
	if s == "" {
		return DefaultMaxConns, nil
	}
	n, err := strconv.Atoi(s)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%q is not a whole number of connections", s)
	case n < 1:
		return 0, fmt.Errorf("%d connections: at least 1 is needed", n)
	case n > MaxMaxConns:
		return 0, fmt.Errorf("%d connections is above the bound of %d", n, MaxMaxConns)
	}
	return n, nil
}

// MaxConnsOf is the connection limit that options (a Target's x- options)
// set: x-max-conns, else DefaultMaxConns. The value was validated when the
// DSN was parsed; an invalid one counts as the default.
func MaxConnsOf(options map[string]string) int {
	n, err := ParseMaxConns(options[OptionMaxConns])
	if err != nil {
		return DefaultMaxConns
	}
	return n
}
