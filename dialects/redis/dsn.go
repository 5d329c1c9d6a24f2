package redis

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"strconv"
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
	for _, k := range []string{"master", "master_name"} {
		if q.Has(k) && q.Get(k) == "" {
			return nil, dialects.Invalidf("%s= is empty: name the master the sentinels monitor (%s=mymaster), or drop it to reach one server", k, k)
		}
	}
	if err := checkDurations(q); err != nil {
		return nil, err
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

// timeoutOptions are go-redis's URL options that bound a wait: each must
// be a positive duration, since go-redis reads 0 and any negative value
// as "no time-out" (or a deadline already past), and a lock command must
// not hang on a silent server.
var timeoutOptions = []string{"dial_timeout", "read_timeout", "write_timeout", "pool_timeout", "dialer_retry_timeout"}

// durationOptions are go-redis's other URL options that take a duration:
// 0 turns the setting off; a negative value is a mistake.
var durationOptions = []string{"min_retry_backoff", "max_retry_backoff", "conn_max_idle_time", "idle_timeout",
	"conn_max_lifetime", "max_conn_age", "conn_max_lifetime_jitter", "route_by_latency_tolerance"}

// checkDurations refuses a duration option of q that go-redis cannot read
// or would read as something else than written: every value is a Go
// duration (3s, 500ms) or a whole number of seconds, as go-redis reads
// them; timeoutOptions must be positive, durationOptions not negative.
func checkDurations(q url.Values) error {
	check := func(k string, positive bool) error {
		if !q.Has(k) {
			return nil
		}
		v := q.Get(k)
		d, err := time.ParseDuration(v)
		if n, nerr := strconv.Atoi(v); nerr == nil {
			d, err = time.Duration(n)*time.Second, nil
		}
		switch {
		case err != nil:
			return dialects.Invalidf("%s=%q is not a duration: write it as 3s or 500ms", k, v)
		case positive && d <= 0:
			return dialects.Invalidf("%s=%q is not a positive duration: write it as 3s or 500ms (go-redis would read it as no time-out)", k, v)
		case d < 0:
			return dialects.Invalidf("%s=%q is negative: write a duration such as 30s, or 0 to turn it off", k, v)
		}
		return nil
	}
	for _, k := range timeoutOptions {
		if err := check(k, true); err != nil {
			return err
		}
	}
	for _, k := range durationOptions {
		if err := check(k, false); err != nil {
			return err
		}
	}
	return nil
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

// limitPool bounds the client's pool to n connections (per node): go-redis
// would otherwise open up to ten per CPU. A smaller pool_size the DSN set
// stays.
func (c *config) limitPool(n int) {
	limit := func(size *int) {
		if *size <= 0 || *size > n {
			*size = n
		}
	}
	switch {
	case c.cluster != nil:
		limit(&c.cluster.PoolSize)
	case c.failover != nil:
		limit(&c.failover.PoolSize)
	case c.single != nil:
		limit(&c.single.PoolSize)
	}
}

// poolSize is the client's pool limit (per node).
func (c *config) poolSize() int {
	switch {
	case c.cluster != nil:
		return c.cluster.PoolSize
	case c.failover != nil:
		return c.failover.PoolSize
	}
	return c.single.PoolSize
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
