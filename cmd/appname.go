package cmd

import (
	"strings"

	"github.com/schedlock/schedlock/internal/dsn"
)

// nameConnections names the connections of target after the command that
// opens them, so that the server's session views and `locks ls` show which
// job holds a session lock: "schedlock run nightly-report", "schedlock
// selfcheck", "schedlock locks ls". command is the command path; detail
// (the lock name of run) follows it. An application name written in the
// DSN wins. Each backend cuts the name to what its server keeps (63 bytes
// on PostgreSQL), so a long lock name never stops the connection; the lock
// itself keeps the whole name.
func nameConnections(target *dsn.DSN, command string, detail ...string) {
	target.NameConnections(strings.Join(append([]string{command}, detail...), " "))
}
