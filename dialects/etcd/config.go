package etcd

import (
	"crypto/tls"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/schedlock/schedlock/dialects"
)

// DefaultPort is the client port dialled when an endpoint names none.
const DefaultPort = "2379"

// DefaultDialTimeout bounds connecting (and authenticating) to the cluster
// when the DSN sets no dial-timeout.
const DefaultDialTimeout = 5 * time.Second

// config is what an etcd DSN says. It holds the password: never print it.
type config struct {
	endpoints   []string // host:port, one per member named
	tls         bool     // etcds://
	user, pass  string
	root        string // the lock-space prefix: "" or ending in "/"
	dialTimeout time.Duration
	files       dialects.TLSFiles // etcds: cacert, cert, key
	serverName  string
}

// parseConfig reads the connection string Open receives: the DSN's URL,
// x- options removed, password included:
//
//	etcd://[user:pass@]host[:2379][,host2[:2379]...][/prefix][?options]
//	etcds://...   the same over TLS
//
// The prefix must be UTF-8 without control characters, as lock names
// are: a NUL byte or stray bytes in every key would be unreadable to
// etcdctl and to people. Options: dial-timeout (a positive Go duration,
// default 5s); for etcds, cacert,
// cert and key (PEM files: the CA that signed the servers' certificates,
// else the system's, and a client certificate) and server-name.
func parseConfig(conn string) (config, error) {
	scheme, rest, ok := strings.Cut(conn, "://")
	if !ok {
		return config{}, dialects.Invalidf("an etcd DSN is etcd://host:2379/prefix")
	}
	var c config
	switch scheme {
	case "etcd":
	case "etcds":
		c.tls = true
	default:
		return config{}, dialects.Invalidf("unknown etcd scheme %q: use etcd:// or etcds://", scheme)
	}
	u, err := dialects.SplitStoreURL(rest)
	if err != nil {
		return config{}, err
	}
	c.user, c.pass, c.endpoints = u.User, u.Pass, u.HostPorts(DefaultPort)
	prefix, err := url.PathUnescape(u.Path)
	if err != nil {
		return config{}, dialects.Invalidf("the prefix of the DSN is not valid URL escaping")
	}
	switch {
	case !utf8.ValidString(prefix):
		return config{}, dialects.Invalidf("the etcd prefix %q is not valid UTF-8: write a prefix of printable text such as etcd://host/jobs", prefix)
	case strings.IndexFunc(prefix, unicode.IsControl) >= 0:
		return config{}, dialects.Invalidf("the etcd prefix %q holds a control character (a NUL byte, a newline, …): write a prefix of printable text such as etcd://host/jobs", prefix)
	}
	if inner := strings.TrimSuffix(strings.TrimPrefix(prefix, "/"), "/"); inner != "" && slices.Contains(strings.Split(inner, "/"), "") {
		return config{}, dialects.Invalidf("the etcd prefix %q has an empty segment: write etcd://host/a/b (etcd://host//a/b for keys that start with /)", prefix)
	}
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	c.root = prefix
	c.dialTimeout = DefaultDialTimeout
	values, err := url.ParseQuery(u.Query)
	if err != nil {
		return config{}, dialects.Invalidf("the options of the DSN are not a valid query string")
	}
	for k, vs := range values {
		v := vs[len(vs)-1]
		if c.files.Set(k, v) {
			continue
		}
		switch k {
		case "dial-timeout":
			d, err := dialects.PositiveDuration(k, v)
			if err != nil {
				return config{}, err
			}
			c.dialTimeout = d
		case "server-name":
			c.serverName = v
		default:
			return config{}, dialects.Invalidf("unknown etcd DSN option %q: use dial-timeout, and with etcds:// cacert, cert, key or server-name", k)
		}
	}
	if !c.tls && (c.files != dialects.TLSFiles{} || c.serverName != "") {
		return config{}, dialects.Invalidf("cacert, cert, key and server-name are TLS options: use etcds://")
	}
	if err := c.files.Check(); err != nil {
		return config{}, err
	}
	return c, nil
}

// tlsConfig builds the TLS configuration of an etcds:// DSN, nil for etcd://.
func (c config) tlsConfig() (*tls.Config, error) {
	if !c.tls {
		return nil, nil
	}
	return c.files.Apply(&tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.serverName})
}

// where names the endpoints for messages.
func (c config) where() string { return strings.Join(c.endpoints, ",") }

func (c config) String() string {
	return fmt.Sprintf("etcd %s prefix %q", c.where(), c.root)
}
