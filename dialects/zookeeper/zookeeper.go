// Package zookeeper is the ZooKeeper backend: locks are Apache Curator's
// InterProcessMutex recipe, so a Curator application and schedlock on the
// same path exclude each other.
//
// # DSN
//
//	zk://[user:pass@]host:2181[,host2:2181,…]/chroot[?session_timeout=10s]
//
// The hosts form the ensemble (port 2181 when omitted); the path is a
// chroot under which every node of schedlock lives ("/" when empty). A
// user and password add ZooKeeper digest credentials (addauth digest
// user:pass) to the session, and the nodes schedlock creates then carry
// the ACL "digest user:pass, all permissions" (CREATOR_ALL_ACL) instead of
// OPEN_ACL_UNSAFE. session_timeout is the session timeout asked of the
// server (default 10s; the server clamps it to 2–20 of its ticks).
//
// # Node layout
//
// The lock "table" of the table strategy is a persistent node under the
// chroot, named by Table.Name (default "schedlock"); Table.Preset has the
// one value "schedlock" here (the others are unsupported: the layout is
// always Curator's). Each lock name is a
// persistent child of it (the name mapped by EncodeName), and a holder or
// waiter is an ephemeral sequential child of that, named as Curator's
// protected mode names it:
//
//	<chroot>/<table>/<encoded name>/_c_<uuid>-lock-<10-digit sequence>
//
// The lowest sequence holds; the others wait, each watching the node just
// before its own (Curator's LockInternals and StandardLockInternalsDriver).
// The data of schedlock's own lock nodes is a small JSON object (owner,
// at-most, at-least); a Curator node holds whatever its client wrote (by
// default the client's IP address), shown as its owner.
//
// The fencing token is the holder node's sequence number: ZooKeeper takes
// it from the name node's child counter, which grows by one with every
// child created under it, so it grows on every acquire as long as the
// name node exists. schedlock never deletes name nodes
// (except with the table, DropTable); a name node that a Curator client
// created as a container is deleted by the server once empty, and the
// sequence then starts again at 0.
//
// # Leases
//
// ZooKeeper has no expiry on an ephemeral node other than its session's
// end. The lease of at-most is bounded while the holder's process lives:
// the holder ends its own lease when at-most passes unrefreshed (its node
// stays, as an expired row stays in a lease table), and a schedlock
// contender that finds a schedlock holder node past its lease (its last
// write time plus at-most, against the server clock read through a
// write) deletes it under its version and takes the lock. When the holder's process dies, the session's expiry
// (session_timeout) frees the lock. A disconnection from the ensemble ends
// every lease of the session at once (as Curator's standard connection
// state policy treats a SUSPENDED connection), because the server may
// expire the session and hand the lock to another client before this one
// hears of it.
//
// At-least is kept by a persistent child "at-least" of the name node that
// a release writes in the same transaction as it deletes its lock node,
// with the end of the at-least in its data (locked-at plus at-least on the
// server clock). schedlock contenders honour it; a Curator peer does not
// know it and may take the lock at once.
package zookeeper

import (
	"context"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/xo/dburl"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/duration"
)

// Name is the backend's registry name.
const Name = "zookeeper"

// Product is its Info.Product.
const Product = "zookeeper"

// DefaultPort is the client port dialled when a host names none.
const DefaultPort = "2181"

// DefaultSessionTimeout is the session timeout asked of the server when
// the DSN names none.
const DefaultSessionTimeout = 10 * time.Second

func init() {
	dialects.Register(&dialects.Dialect{
		Name:        Name,
		Title:       "ZooKeeper",
		Support:     supportRows,
		Schemes:     []dialects.Scheme{{Name: "zk", DefaultPort: DefaultPort, URL: &dburl.Scheme{Name: "zk", Generator: genURL, Aliases: []string{"zookeeper"}}}},
		Forms:       "zk://",
		Starts:      []string{"zk://"},
		Products:    map[string]string{Product: "ZooKeeper"},
		ConnString:  connString,
		ConnectHint: connectHint,
		Open: func(ctx context.Context, t dialects.Target) (dialects.Backend, error) {
			return Open(ctx, t.Conn)
		},
	})
}

// genURL is the dburl generator of zk:// URLs: the URL itself.
func genURL(u *dburl.URL) (string, string, error) {
	v := u.URL
	v.Scheme = "zk"
	return v.String(), "", nil
}

// connString keeps the URL as written (without the x- options, which the
// DSN layer removed): Open parses it again.
func connString(u *dburl.URL) (string, error) {
	v := u.URL
	v.Scheme = "zk"
	// Parsed here too, so a bad parameter is a bad DSN before any dial.
	_, err := ParseDSN(v.String())
	return v.String(), err
}

// connectHint says what to check when the ensemble could not be reached.
func connectHint(err error) string {
	if strings.Contains(err.Error(), "no session") {
		return "is ZooKeeper running on every host of the DSN, and are the ports its client ports?"
	}
	return ""
}

// Config is a parsed zk:// DSN.
type Config struct {
	// Servers are the ensemble's host:port addresses.
	Servers []string
	// Chroot is the node under which everything lives: "" for the root,
	// else "/a/b" without a trailing slash.
	Chroot string
	// User and Password are the digest credentials, when given.
	User, Password string
	// SessionTimeout is asked of the server.
	SessionTimeout time.Duration
}

// ParseDSN parses zk://[user:pass@]host[:port][,host[:port]…]/chroot with
// its query (session_timeout). Errors match dialects.ErrInvalid and never
// contain the password.
func ParseDSN(raw string) (Config, error) {
	var c Config
	u, err := url.Parse(raw)
	if err != nil {
		return c, dialects.Invalidf("zookeeper DSN is not a URL: write zk://host:2181[,host2:2181]/chroot")
	}
	if u.Scheme != "zk" && u.Scheme != "zookeeper" {
		return c, dialects.Invalidf("zookeeper DSN must start with zk://, not %s://", u.Scheme)
	}
	for _, h := range strings.Split(u.Host, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if !strings.Contains(strings.TrimPrefix(h, "["), "]:") && strings.Count(h, ":") != 1 {
			h = strings.Trim(h, "[]")
			h = joinHostPort(h, DefaultPort)
		}
		c.Servers = append(c.Servers, h)
	}
	if len(c.Servers) == 0 {
		c.Servers = []string{"localhost:" + DefaultPort}
	}
	if u.User != nil {
		c.User = u.User.Username()
		c.Password, _ = u.User.Password()
		if c.User == "" {
			return c, dialects.Invalidf("zookeeper digest credentials need a user name: zk://user:pass@host/chroot")
		}
	}
	chroot := strings.TrimRight(u.Path, "/")
	if chroot != "" {
		if err := checkChroot(chroot); err != nil {
			return c, err
		}
	}
	c.Chroot = chroot
	c.SessionTimeout = DefaultSessionTimeout
	for k, vs := range u.Query() {
		v := vs[len(vs)-1]
		switch k {
		case "session_timeout":
			d, err := duration.Parse(v)
			if err != nil || d < time.Second {
				return c, dialects.Invalidf("session_timeout=%q is not a duration of at least 1s (e.g. 10s or PT10S)", v)
			}
			c.SessionTimeout = d
		default:
			return c, dialects.Invalidf("unknown zookeeper DSN parameter %q: the only one is session_timeout", k)
		}
	}
	return c, nil
}

func joinHostPort(host, port string) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]:" + port
	}
	return host + ":" + port
}

// ReservedPath is the node ZooKeeper keeps for itself (its quotas and its
// dynamic configuration live under it). No chroot or table node of
// schedlock may be it or lie under it.
const ReservedPath = "/zookeeper"

// reserved reports whether the path p is ReservedPath or lies under it.
func reserved(p string) bool {
	return p == ReservedPath || strings.HasPrefix(p, ReservedPath+"/")
}

// checkChroot refuses a chroot that is not a plain ZooKeeper path: one
// that is not UTF-8, holds a control character (NUL included, which the
// server cannot take), has an empty, "." or ".." segment or characters
// ZooKeeper refuses, or lies in ReservedPath.
func checkChroot(p string) error {
	switch {
	case !utf8.ValidString(p):
		return dialects.Invalidf("zookeeper chroot %q is not valid UTF-8: write a path of printable text such as /jobs", p)
	case strings.IndexFunc(p, unicode.IsControl) >= 0:
		return dialects.Invalidf("zookeeper chroot %q holds a control character (a NUL byte, a newline, …): write a path of printable text such as /jobs", p)
	case reserved(p):
		return dialects.Invalidf("zookeeper chroot %q is in %s, which ZooKeeper keeps for itself: choose another path such as /jobs", p, ReservedPath)
	}
	for _, part := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		if part == "" || part == "." || part == ".." {
			return dialects.Invalidf("zookeeper chroot %q is not a plain path: write /a/b", p)
		}
		if EncodeName(part) != part {
			return dialects.Invalidf("zookeeper chroot %q has characters ZooKeeper refuses in a path", p)
		}
	}
	return nil
}

// String is the configuration without the password, for messages.
func (c Config) String() string {
	s := "zk://" + strings.Join(c.Servers, ",") + c.Chroot
	if c.User != "" {
		s = "zk://" + c.User + ":xxxxx@" + strings.Join(c.Servers, ",") + c.Chroot
	}
	return s
}

// wrap is dialects.Wrap for this backend.
func wrap(op string, err error) error { return dialects.Wrap(Name, op, err) }
