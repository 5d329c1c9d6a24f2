package redis

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/schedlock/schedlock/dialects"
)

// Deployment modes, as Info.Mode reports them.
const (
	ModeStandalone = "standalone"
	ModeSentinel   = "sentinel"
	ModeCluster    = "cluster"
)

// config is a parsed DSN: the client to build and the address for
// messages.
type config struct {
	mode     string // ModeStandalone, ModeSentinel or ModeCluster, as the DSN asks
	single   *goredis.Options
	cluster  *goredis.ClusterOptions
	failover *goredis.FailoverOptions
}

// parseDSN reads a redis:// or rediss:// URL (see the package doc). The
// errors never quote the password.
func parseDSN(raw string) (*config, error) {
	hosts, single := splitHosts(raw)
	u, err := url.Parse(single)
	if err != nil {
		return nil, fmt.Errorf("%w: not a Redis URL", dialects.ErrInvalid)
	}
	if u.Scheme != Name && u.Scheme != schemeTLS {
		return nil, fmt.Errorf("%w: Redis URLs start with redis:// or rediss://, not %s://", dialects.ErrInvalid, u.Scheme)
	}
	q := u.Query()
	for i, h := range hosts {
		if h == "" {
			return nil, fmt.Errorf("%w: empty host in the Redis URL's host list", dialects.ErrInvalid)
		}
		if i > 0 {
			q.Add("addr", withPort(h))
		}
	}
	// cacert, cert and key, as etcds:// has them (go-redis has none).
	files := dialects.TLSFiles{CA: q.Get("cacert"), Cert: q.Get("cert"), Key: q.Get("key")}
	q.Del("cacert")
	q.Del("cert")
	q.Del("key")
	if files != (dialects.TLSFiles{}) && u.Scheme != schemeTLS {
		return nil, fmt.Errorf("%w: cacert, cert and key are TLS options: use rediss://", dialects.ErrInvalid)
	}
	master := q.Get("master")
	q.Del("master")
	if master != "" {
		q.Set("master_name", master)
	}
	u.RawQuery = q.Encode()
	c := &config{}
	switch {
	case q.Get("master_name") != "":
		c.mode = ModeSentinel
		if c.failover, err = goredis.ParseFailoverURL(u.String()); err == nil {
			// One set of credentials: the master's are the sentinels'.
			c.failover.Username, c.failover.Password = c.failover.SentinelUsername, c.failover.SentinelPassword
		}
	case len(q["addr"]) > 0:
		c.mode = ModeCluster
		if u.Path == "/0" || u.Path == "/" {
			u.Path = ""
		}
		if u.Path != "" {
			return nil, fmt.Errorf("%w: Redis Cluster has only database 0; remove /%s from the URL", dialects.ErrInvalid, strings.Trim(u.Path, "/"))
		}
		c.cluster, err = goredis.ParseClusterURL(u.String())
	default:
		c.mode = ModeStandalone
		c.single, err = goredis.ParseURL(u.String())
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s", dialects.ErrInvalid, scrubOptionError(err))
	}
	if db := c.database(); db < 0 {
		return nil, fmt.Errorf("%w: Redis database number %d is negative: write /0, /1, …", dialects.ErrInvalid, db)
	}
	if u.Scheme == schemeTLS {
		if err := c.applyTLSFiles(files); err != nil {
			return nil, err
		}
		c.setTLSDialer()
	}
	return c, nil
}

// setTLSDialer makes a rediss:// client dial with tlsDialer, which tells a
// plaintext port from a silent one.
func (c *config) setTLSDialer() {
	o := c.options()
	*o.dialer = tlsDialer(*o.tls, dialTimeout(o.dialTimeout))
}

// dialTimeout is go-redis's DialTimeout with its default (5s) filled in.
func dialTimeout(d time.Duration) time.Duration {
	if d <= 0 {
		return 5 * time.Second
	}
	return d
}

// database is the database number the DSN names (0 for Cluster).
func (c *config) database() int { return c.options().db }

// usesTLS reports whether c dials with TLS (rediss://).
func (c *config) usesTLS() bool { return *c.options().tls != nil }

// clientOptions are the options every kind of client has (single,
// Cluster, Sentinel), the settable ones as pointers into c.
type clientOptions struct {
	tls         **tls.Config
	dialer      *func(ctx context.Context, network, addr string) (net.Conn, error)
	dialTimeout time.Duration
	db          int
	user        string // the ACL user ("": the default user)
}

// options are the clientOptions of the client c describes.
func (c *config) options() clientOptions {
	switch {
	case c.cluster != nil:
		return clientOptions{tls: &c.cluster.TLSConfig, dialer: &c.cluster.Dialer, dialTimeout: c.cluster.DialTimeout, user: c.cluster.Username}
	case c.failover != nil:
		return clientOptions{tls: &c.failover.TLSConfig, dialer: &c.failover.Dialer, dialTimeout: c.failover.DialTimeout, db: c.failover.DB, user: c.failover.Username}
	}
	return clientOptions{tls: &c.single.TLSConfig, dialer: &c.single.Dialer, dialTimeout: c.single.DialTimeout, db: c.single.DB, user: c.single.Username}
}

// applyTLSFiles reads files into the TLS configuration go-redis made for
// a rediss:// URL (it verifies the server's name; skip_verify=true, a
// go-redis option, turns verification off).
func (c *config) applyTLSFiles(files dialects.TLSFiles) error {
	t := c.options().tls
	cfg, err := files.Apply(*t)
	if err != nil {
		return err
	}
	*t = cfg
	return nil
}

// splitHosts cuts the comma-separated host list out of raw (which
// net/url cannot parse when a host before the last has a port) and
// returns it with raw naming only the first host.
func splitHosts(raw string) (hosts []string, single string) {
	i := strings.Index(raw, "://")
	if i < 0 {
		return []string{""}, raw
	}
	start := i + 3
	end := len(raw)
	if j := strings.IndexAny(raw[start:], "/?#"); j >= 0 {
		end = start + j
	}
	if at := strings.LastIndexByte(raw[start:end], '@'); at >= 0 {
		start += at + 1
	}
	hosts = strings.Split(raw[start:end], ",")
	return hosts, raw[:start] + hosts[0] + raw[end:]
}

// withPort adds the default port to a host that names none.
func withPort(h string) string {
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") || !strings.Contains(h, ":") {
		return h + ":6379"
	}
	return h
}

// scrubOptionError is go-redis's URL error without the "redis: " prefix;
// go-redis never quotes the password in them.
func scrubOptionError(err error) string {
	return strings.TrimPrefix(err.Error(), "redis: ")
}

// newClient builds the client c describes.
func (c *config) newClient() goredis.UniversalClient {
	switch {
	case c.cluster != nil:
		return goredis.NewClusterClient(c.cluster)
	case c.failover != nil:
		return goredis.NewFailoverClient(c.failover)
	}
	return goredis.NewClient(c.single)
}

// asCluster is c's single server as the seed of a Cluster client, for a
// standalone DSN that named a Cluster node.
func (c *config) asCluster() *config {
	o := c.single
	return &config{mode: ModeCluster, cluster: &goredis.ClusterOptions{
		Addrs: []string{o.Addr}, Username: o.Username, Password: o.Password, TLSConfig: o.TLSConfig,
		DialTimeout: o.DialTimeout, ReadTimeout: o.ReadTimeout, WriteTimeout: o.WriteTimeout,
		PoolSize: o.PoolSize, MaxRetries: o.MaxRetries,
	}}
}
