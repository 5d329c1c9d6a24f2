// Package exporter serves the locks of one or more databases to
// Prometheus and to people: /metrics (client_golang), a read-only status
// page at / and /healthz, behind the TLS and basic-auth web config of
// prometheus/exporter-toolkit.
//
// It reads each database through the listing `schedlock locks ls` uses (a
// Source the command line opens), once per Options.Cache at most however
// many scrapes arrive: one read of every lock table and server lock view
// per refresh, shared by /metrics and the status page. A database that
// fails is reported with up 0 and one log line, and read again at the next
// refresh (its Source reopened), so it comes back by itself.
//
// Metric names, labels and types are listed in docs/monitoring.md; the
// label cap on holders is Options.MaxHolders.
package exporter
