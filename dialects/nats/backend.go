package nats

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/schedlock/schedlock/dialects"
)

// Backend is an open connection to a NATS server (or cluster) with
// JetStream. It implements dialects.Backend.
type Backend struct {
	dialects.LeasePauser // Pause and Resume: a lease on the lock's own item

	cfg  config
	nc   *nats.Conn
	js   jetstream.JetStream
	info dialects.Info

	mu     sync.Mutex
	facts  facts
	opened map[string]jetstream.Stream // bucket streams read, not yet taken by a locker

	leases dialects.LeaseSet[*lease] // live leases, ended by Close and Expire
}

var (
	_ dialects.Backend      = (*Backend)(nil)
	_ dialects.LockLister   = (*Backend)(nil)
	_ dialects.LockBreaker  = (*Backend)(nil)
	_ dialects.Prober       = (*Backend)(nil)
	_ dialects.RiskReporter = (*Backend)(nil)
	_ dialects.Pauser       = (*Backend)(nil)
	_ dialects.KeyDeleter   = (*Backend)(nil)
)

// Open connects to the servers conn names and reads the stream info of
// the DSN's bucket, which also tells that JetStream answers (one
// request). An unreachable server or a refused login is a
// *dialects.UnreachableError; a server without JetStream an Invalid error.
func Open(ctx context.Context, conn string) (*Backend, error) {
	cfg, err := parseConfig(conn)
	if err != nil {
		return nil, err
	}
	tlsCfg, err := cfg.tlsConfig()
	if err != nil {
		return nil, err
	}
	opts := []nats.Option{nats.Name("schedlock"), nats.Timeout(cfg.dialTimeout), nats.MaxReconnects(-1)}
	if cfg.user != "" {
		opts = append(opts, nats.UserInfo(cfg.user, cfg.pass))
	}
	if cfg.creds != "" {
		opts = append(opts, nats.UserCredentials(cfg.creds))
	}
	if tlsCfg != nil {
		opts = append(opts, nats.Secure(tlsCfg))
	}
	nc, err := nats.Connect(cfg.urls(), opts...)
	if err != nil {
		return nil, dialects.Unreachable(fmt.Errorf("nats %s: connect: %w", cfg.where(), err))
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("nats %s: %w", cfg.where(), err)
	}
	actx, cancel := context.WithTimeout(ctx, cfg.dialTimeout)
	defer cancel()
	b := &Backend{cfg: cfg, nc: nc, js: js, opened: map[string]jetstream.Stream{}}
	b.LeasePauser = dialects.LeasePauser{Dialect: Name, Locker: b.LeaseLocker}
	b.facts = facts{version: nc.ConnectedServerVersion(), cluster: nc.ConnectedClusterName(), buckets: map[string]bucketFacts{}}
	mode := "single server"
	if b.facts.cluster != "" {
		mode = "cluster " + b.facts.cluster
	}
	b.info = dialects.Info{Dialect: Name, Product: Product, Version: b.facts.version, Mode: mode,
		Banner: "nats-server " + b.facts.version + " (" + mode + ")"}
	// The DSN's bucket, for Risks (its storage); missing is no error. Its
	// stream info is also the first JetStream request: it tells a server
	// or account without JetStream.
	if _, _, err := b.readBucket(actx, cfg.bucket); err != nil {
		nc.Close()
		if noJetStream(err) {
			return nil, dialects.Invalidf("nats %s: JetStream is not enabled on the server (start it with -js)", cfg.where())
		}
		return nil, err
	}
	return b, nil
}

// Detected implements dialects.Backend.
func (b *Backend) Detected() dialects.Info { return b.info }

// Locker implements dialects.Backend: the table strategy only.
func (b *Backend) Locker(strategy dialects.Strategy, t dialects.Table) (dialects.Locker, error) {
	return dialects.LeaseOnlyLocker(Name, "NATS has no session locks; its locks are leases (the table strategy)", strategy, t, b.LeaseLocker)
}

// LeaseLocker returns the locker on the bucket t names, in the layout of
// its preset: schedlock (default) in the DSN's bucket for the default
// table name, else in the bucket named as the table; shedlock (ShedLock's
// layout, shedlock.go) in the bucket named as the table, else the DSN's
// bucket when the DSN names one, else ShedLock's "shedlock-locks".
func (b *Backend) LeaseLocker(t dialects.Table) (dialects.LeaseLocker, error) {
	preset := t.Preset
	if preset == "" {
		preset = dialects.PresetSchedlock
	}
	if preset != dialects.PresetSchedlock && preset != dialects.PresetShedlock {
		return nil, dialects.Invalidf("the NATS backend has the schedlock and shedlock layouts, not the %s preset", preset)
	}
	s, err := dialects.Table{Preset: preset, Name: t.Name}.Schema()
	if err != nil {
		return nil, err
	}
	bucket := b.bucketOf(preset, t.Name)
	if !validBucket(bucket) {
		return nil, dialects.Invalidf("the NATS bucket %q may hold only letters, digits, _ and -", bucket)
	}
	if preset == dialects.PresetShedlock {
		s.TokenCol = hdrToken // the token rides in a header ShedLock ignores
	}
	return &Locker{b: b, bucket: bucket, schema: s, shed: preset == dialects.PresetShedlock}, nil
}

// bucketOf is the bucket of a table of preset named name ("" or the
// preset's default: the default bucket).
func (b *Backend) bucketOf(preset, name string) string {
	switch {
	case preset == dialects.PresetShedlock && (name == "" || name == dialects.PresetShedlock):
		if b.cfg.bucketSet {
			return b.cfg.bucket
		}
		return ShedlockBucket
	case name == "" || name == dialects.PresetSchedlock:
		return b.cfg.bucket
	}
	return name
}

// Recommend implements dialects.Backend.
func (b *Backend) Recommend() (dialects.Strategy, string) {
	return dialects.StrategyTable, "NATS KV locks are keys written under revision checks (the table strategy)"
}

// Close implements dialects.Backend: live leases end, the connection closes.
func (b *Backend) Close() error {
	if !b.leases.Close(func(l *lease) { l.End(dialects.BackendClosed()) }) {
		return nil
	}
	b.nc.Close()
	return nil
}

// noJetStream reports a request that JetStream did not answer because
// the server or the account has none: no responders on the API subject,
// or the server's own "not enabled" errors.
func noJetStream(err error) bool {
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount)
}
