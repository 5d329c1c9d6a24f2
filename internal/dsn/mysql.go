package dsn

import (
	"net/url"
	"regexp"
	"strings"
)

// nativeMySQLRE spots go-sql-driver's own DSN form,
// [user[:password]@][net[(addr)]]/dbname[?params], which is not a URL.
// The password may hold any byte, '/' and '@' included, as the driver
// finds the last '@' before the last '/'.
var nativeMySQLRE = regexp.MustCompile(`^(?:.*@)?(?:tcp|tcp4|tcp6|udp|unix)\(|^[^/:]*(?::.*)?@/`)

func isNativeMySQL(s string) bool {
	return !strings.Contains(s, "://") && nativeMySQLRE.MatchString(s)
}

// mysqlParts is a go-sql-driver DSN taken apart the way the driver's
// ParseDSN does it: the last '/' ends the address, the last '@' before it
// ends the user info, the first ':' in that splits user from password.
type mysqlParts struct {
	user, pass  string
	hasPass     bool
	net, addr   string
	db, query   string
	passStart   int // index of the password in the string (-1: none)
	passEnd     int
	hasUserInfo bool
	addrWritten bool
}

func splitNativeMySQL(s string) (mysqlParts, bool) {
	p := mysqlParts{passStart: -1}
	slash := strings.LastIndexByte(s, '/')
	if slash < 0 {
		return p, false
	}
	// dbname[?params]
	rest := s[slash+1:]
	if q := strings.IndexByte(rest, '?'); q >= 0 {
		p.db, p.query = rest[:q], rest[q+1:]
	} else {
		p.db = rest
	}
	left := s[:slash]
	at := strings.LastIndexByte(left, '@')
	if at >= 0 {
		p.hasUserInfo = true
		info := left[:at]
		if c := strings.IndexByte(info, ':'); c >= 0 {
			p.user, p.pass, p.hasPass = info[:c], info[c+1:], true
			p.passStart, p.passEnd = c+1, at
		} else {
			p.user = info
		}
	}
	netaddr := left[at+1:]
	if o := strings.IndexByte(netaddr, '('); o >= 0 {
		if !strings.HasSuffix(netaddr, ")") {
			return p, false
		}
		p.net, p.addr, p.addrWritten = netaddr[:o], netaddr[o+1:len(netaddr)-1], true
	} else {
		p.net = netaddr
	}
	return p, true
}

// where is the address the driver will dial: go-sql-driver's defaults are
// tcp and 127.0.0.1:3306.
func (p mysqlParts) where() string {
	switch {
	case p.addr != "":
		return p.addr
	case p.net == "unix":
		return "/tmp/mysql.sock"
	default:
		return "127.0.0.1:3306"
	}
}

// format writes p back with its query rewritten by driverQuery (the MySQL
// entry's DriverQuery: the driver parameters schedlock needs).
func (p mysqlParts) format(driverQuery func(string) string) string {
	var b strings.Builder
	if p.hasUserInfo {
		b.WriteString(p.user)
		if p.hasPass {
			b.WriteString(":" + p.pass)
		}
		b.WriteString("@")
	}
	b.WriteString(p.net)
	if p.addrWritten {
		b.WriteString("(" + p.addr + ")")
	}
	b.WriteString("/" + p.db)
	query := p.query
	if driverQuery != nil {
		query = driverQuery(query)
	}
	if query != "" {
		b.WriteString("?" + query)
	}
	return b.String()
}

func (p mysqlParts) dbName() string {
	if db, err := url.PathUnescape(p.db); err == nil {
		return db
	}
	return p.db
}
