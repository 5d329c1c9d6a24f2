package dialects

import (
	"net"
	"net/url"
	"strings"
)

// StoreURL is the part of a store DSN after "scheme://":
// [user[:password]@]host[:port][,host2[:port]...][/path][?query], split
// but not interpreted. User and Pass are unescaped; Userinfo is what
// stands before "@" as written, RawPass the password as written, HasPass
// whether a ":" was there.
type StoreURL struct {
	Userinfo, User, Pass, RawPass string
	HasPass                       bool
	Hosts                         string // as written, "" when none
	Path                          string // after the first "/", escaped as written
	Query                         string // after "?"
}

// SplitStoreURL splits rest, the DSN after "scheme://"; the only error is
// a user name or password that is not valid URL escaping (Invalid).
func SplitStoreURL(rest string) (StoreURL, error) {
	var s StoreURL
	rest, s.Query, _ = strings.Cut(rest, "?")
	s.Hosts, s.Path, _ = strings.Cut(rest, "/")
	if at := strings.LastIndex(s.Hosts, "@"); at >= 0 {
		s.Userinfo, s.Hosts = s.Hosts[:at], s.Hosts[at+1:]
		var u string
		u, s.RawPass, s.HasPass = strings.Cut(s.Userinfo, ":")
		var err error
		if s.User, err = url.PathUnescape(u); err != nil {
			return StoreURL{}, Invalidf("the user name of the DSN is not valid URL escaping")
		}
		if s.Pass, err = url.PathUnescape(s.RawPass); err != nil {
			return StoreURL{}, Invalidf("the password of the DSN is not valid URL escaping")
		}
	}
	return s, nil
}

// HostPorts is the comma-separated host list as host:port addresses,
// defaultPort where a host names none; localhost:defaultPort when the
// list is empty.
func (s StoreURL) HostPorts(defaultPort string) []string {
	var out []string
	for _, h := range strings.Split(s.Hosts, ",") {
		if h == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(h); err != nil {
			h = net.JoinHostPort(strings.Trim(h, "[]"), defaultPort)
		}
		out = append(out, h)
	}
	if len(out) == 0 {
		out = []string{net.JoinHostPort("localhost", defaultPort)}
	}
	return out
}
