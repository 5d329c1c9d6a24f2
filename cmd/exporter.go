package cmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/spf13/cobra"

	"github.com/schedlock/schedlock/internal/exporter"
	"github.com/schedlock/schedlock/internal/iostreams"
	"github.com/schedlock/schedlock/internal/webconfig"
)

// DefaultExporterAddress is the exporter's default listen address: the
// port registered for it among Prometheus exporters' default ports.
const DefaultExporterAddress = ":9873"

// ExporterOptions are the inputs of `schedlock exporter`.
type ExporterOptions struct {
	IO      *iostreams.IOStreams
	Factory *Factory
	Global  *GlobalOptions
	Command string

	DSNs        []string
	DSNFiles    []string
	TargetsFile string
	Listen      string
	WebConfig   string
	Cache       time.Duration
	ReadTimeout time.Duration
	MaxHolders  int

	// listening, when set, is told the address the exporter listens on
	// (tests listen on port 0).
	listening func(net.Addr)
}

// NewCmdExporter builds `schedlock exporter`. runF replaces its run
// function in tests.
func NewCmdExporter(f *Factory, g *GlobalOptions, runF func(context.Context, *ExporterOptions) error) *cobra.Command {
	opts := &ExporterOptions{IO: f.IO, Factory: f, Global: g}
	c := &cobra.Command{
		Use:   "exporter",
		Short: "Serve the locks of one or more databases to Prometheus, with a status page",
		Long: `exporter is a long-running process that serves, on --web.listen-address:

  /metrics  Prometheus metrics of every lock of every database: its state,
            lease, holder, fencing token and last run, and per database
            whether it could be read (schedlock_up) and how long that took;
  /         a status page for people, reloading itself: every lock with its
            state, holder, lease end and last run. It only shows: freeing,
            pausing and resuming stay with unlock, pause and resume;
  /healthz  "ok" while the process serves.

The databases are --dsn (repeatable), --dsn-file (repeatable, one DSN per
file) and the entries of --targets, a YAML file that names each database and
gives it labels:

  targets:
    - name: jobs-primary            # the dsn label (default: the DSN, password masked)
      dsn_file: /etc/schedlock/jobs.dsn
      labels: {env: prod}
    - dsn: redis://cache1:6379/0

With none of them, $SCHEDLOCK_DSN, $SCHEDLOCK_DSN_FILE or $DATABASE_URL.

Each database is read the way 'schedlock locks ls --all' reads it (the
lock tables the DSN's x-table/x-preset name, else every known one, and the
server's session locks, with the last run of each job where a run table
exists): one query per lock table or lock view, at most once per --cache
whatever the number of scrapes. A database that cannot be read is exported
as schedlock_up 0 with the reason, logged in one line, and read again at the
next scrape: the others are exported as usual, and it comes back by itself.

TLS and basic authentication follow Prometheus' web configuration file
(--web.config.file, node_exporter's format: tls_server_config with
cert_file, key_file, client_ca_file, client_auth_type, min_version,
max_version, cipher_suites and curve_preferences; http_server_config with
http2 and headers; basic_auth_users with bcrypt hashes); a file that does not
load (a bad password hash, a missing certificate) is refused at start.
SIGTERM or Ctrl-C shuts down gracefully. Metrics, alert rules and the
Grafana dashboard: docs/monitoring.md.

Exit codes: 0 shut down by a signal, 1 could not serve (the address is
taken), 2 usage error (a bad flag, targets file or web config).`,
		Example: `  # Two databases on the default port :9873
  schedlock exporter --dsn 'postgres://ops@db1/jobs' --dsn 'redis://cache1:6379/0'

  # Named databases with labels, TLS and basic auth
  schedlock exporter --targets /etc/schedlock/targets.yaml --web.config.file /etc/schedlock/web.yaml

  # Read the databases at most every 30s, on localhost only
  schedlock exporter --dsn-file /etc/schedlock/jobs.dsn --cache 30s --web.listen-address 127.0.0.1:9873`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			opts.Command = c.CommandPath()
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return exporterRun(c.Context(), opts)
		},
	}
	fl := c.Flags()
	fl.StringArrayVar(&opts.DSNs, "dsn", nil, "a database or store to watch, e.g. postgres://ops@db1:5432/jobs (repeatable; default $SCHEDLOCK_DSN, then $DATABASE_URL)")
	_ = c.RegisterFlagCompletionFunc("dsn", dsnCompletion)
	fl.StringArrayVar(&opts.DSNFiles, "dsn-file", nil, "read a DSN from this file (one line; chmod 600) (repeatable; default $SCHEDLOCK_DSN_FILE)")
	_ = c.MarkFlagFilename("dsn-file")
	fl.StringVar(&opts.TargetsFile, "targets", "", "YAML file listing the databases with names and labels (see above)")
	_ = c.MarkFlagFilename("targets", "yaml", "yml")
	fl.StringVar(&opts.Listen, "web.listen-address", DefaultExporterAddress, "address to serve /metrics, / and /healthz on")
	_ = c.RegisterFlagCompletionFunc("web.listen-address", cobra.NoFileCompletions)
	fl.StringVar(&opts.WebConfig, "web.config.file", "", "Prometheus web configuration file for TLS and basic auth (default: plain HTTP, no auth)")
	_ = c.MarkFlagFilename("web.config.file", "yaml", "yml")
	durationVar(fl, &opts.Cache, "cache", exporter.DefaultCache, "reuse a read of the databases for this long: scrapes within it cost the databases nothing")
	durationVar(fl, &opts.ReadTimeout, "read-timeout", exporter.DefaultReadTimeout, "give up reading one database after this long (it is then up 0)")
	fl.IntVar(&opts.MaxHolders, "max-holders", exporter.DefaultMaxHolders, "export at most this many holder series per database; the holders past it are folded into one series and counted")
	_ = c.RegisterFlagCompletionFunc("max-holders", cobra.NoFileCompletions)
	return c
}

func exporterRun(ctx context.Context, o *ExporterOptions) error {
	switch {
	case o.Cache <= 0:
		return usageErrorf(o.Command, "--cache must be positive, got %s", o.Cache)
	case o.ReadTimeout <= 0:
		return usageErrorf(o.Command, "--read-timeout must be positive, got %s", o.ReadTimeout)
	case o.MaxHolders <= 0:
		return usageErrorf(o.Command, "--max-holders must be positive, got %d", o.MaxHolders)
	}
	targets, err := o.targets()
	if err != nil {
		return err
	}
	web, err := webconfig.Load(o.WebConfig)
	if err != nil {
		return usageErrorf(o.Command, "--web.config.file %s: %v", o.WebConfig, err)
	}
	logger := exporterLogger(o)
	e, err := exporter.New(targets, exporter.Options{Cache: o.Cache, ReadTimeout: o.ReadTimeout, MaxHolders: o.MaxHolders, Logger: logger})
	if err != nil {
		return &UsageError{Err: err, Command: o.Command}
	}
	l, err := net.Listen("tcp", o.Listen)
	if err != nil {
		_ = e.Close()
		var addr *net.AddrError
		if errors.As(err, &addr) {
			return usageErrorf(o.Command, "--web.listen-address %q: %v", o.Listen, err)
		}
		return fmt.Errorf("cannot listen on %s: %w", o.Listen, err)
	}
	if o.listening != nil {
		o.listening(l.Addr())
	}
	return e.Serve(ctx, l, web)
}
