package nats

import (
	"crypto/tls"
	"net/url"
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// DefaultPort is the client port dialled when a server names none.
const DefaultPort = "4222"

// DefaultBucket is the bucket of a DSN that names none.
const DefaultBucket = "schedlock"

// DefaultDialTimeout bounds connecting when the DSN sets no dial-timeout.
const DefaultDialTimeout = 5 * time.Second

// config is what a NATS DSN says. It holds the password: never print it.
type config struct {
	servers     []string // host:port
	tls         bool
	user, pass  string
	bucket      string
	bucketSet   bool // the DSN names the bucket
	creds       string
	dialTimeout time.Duration
	files       dialects.TLSFiles
	serverName  string
}

// parseConfig reads nats://[user:pass@]host[:4222][,host2...][/BUCKET][?opts]
// (tls:// for TLS). Options: creds (a NATS credentials file), dial-timeout
// (default 5s); with tls://, cacert, cert, key and server-name.
func parseConfig(conn string) (config, error) {
	scheme, rest, ok := strings.Cut(conn, "://")
	if !ok {
		return config{}, dialects.Invalidf("a NATS DSN is nats://host:4222/BUCKET")
	}
	var c config
	switch scheme {
	case "nats":
	case "tls":
		c.tls = true
	default:
		return config{}, dialects.Invalidf("unknown NATS scheme %q: use nats:// or tls://", scheme)
	}
	u, err := dialects.SplitStoreURL(rest)
	if err != nil {
		return config{}, err
	}
	c.user, c.pass, c.servers = u.User, u.Pass, u.HostPorts(DefaultPort)
	c.bucket = strings.Trim(u.Path, "/")
	c.bucketSet = c.bucket != ""
	if c.bucket == "" {
		c.bucket = DefaultBucket
	}
	if !validBucket(c.bucket) {
		return config{}, dialects.Invalidf("the NATS bucket %q may hold only letters, digits, _ and -", c.bucket)
	}
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
		case "creds":
			c.creds = v
		case "dial-timeout":
			d, err := dialects.PositiveDuration(k, v)
			if err != nil {
				return config{}, err
			}
			c.dialTimeout = d
		case "server-name":
			c.serverName = v
		default:
			return config{}, dialects.Invalidf("unknown NATS DSN option %q: use creds, dial-timeout, and with tls:// cacert, cert, key or server-name", k)
		}
	}
	if !c.tls && (c.files != dialects.TLSFiles{} || c.serverName != "") {
		return config{}, dialects.Invalidf("cacert, cert, key and server-name are TLS options: use tls://")
	}
	if err := c.files.Check(); err != nil {
		return config{}, err
	}
	return c, nil
}

// validBucket reports whether s is a JetStream KV bucket name.
func validBucket(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// tlsConfig builds the TLS configuration of a tls:// DSN, nil otherwise.
func (c config) tlsConfig() (*tls.Config, error) {
	if !c.tls {
		return nil, nil
	}
	return c.files.Apply(&tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.serverName})
}

// urls is the server list for nats.Connect, without credentials.
func (c config) urls() string {
	scheme := "nats://"
	if c.tls {
		scheme = "tls://"
	}
	out := make([]string, len(c.servers))
	for i, s := range c.servers {
		out[i] = scheme + s
	}
	return strings.Join(out, ",")
}

func (c config) where() string { return strings.Join(c.servers, ",") }
