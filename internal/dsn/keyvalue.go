package dsn

import (
	"errors"
	"net"
	"regexp"
	"strings"
)

// keyValueRE spots libpq's key=value form: "host=db1 user=app dbname=jobs".
var keyValueRE = regexp.MustCompile(`^\s*[A-Za-z_]+\s*=`)

func isKeyValue(s string) bool {
	return !strings.Contains(s, "://") && keyValueRE.MatchString(s)
}

// kvPair is one key=value of a libpq connection string; start and end
// locate the value as written (quotes included).
type kvPair struct {
	key, value string
	start, end int
}

// splitKeyValue parses libpq's syntax: values may be single-quoted, with
// backslash escapes inside quotes. It is written here, not taken from
// pgx, because what it is for is where each value stands in the string
// as written (to mask a password in place, keeping the rest as typed):
// pgconn.ParseConfig returns values only, and adds $PG* variables and
// service files that are not in the string. pgx still parses the string
// itself when it connects.
func splitKeyValue(s string) ([]kvPair, error) {
	var pairs []kvPair
	i := 0
	for {
		for i < len(s) && s[i] == ' ' || i < len(s) && s[i] == '\t' {
			i++
		}
		if i >= len(s) {
			return pairs, nil
		}
		eq := strings.IndexByte(s[i:], '=')
		if eq < 0 {
			return nil, errors.New("key=value connection string: a key has no value")
		}
		key := strings.TrimSpace(s[i : i+eq])
		i += eq + 1
		for i < len(s) && s[i] == ' ' {
			i++
		}
		start := i
		var b strings.Builder
		if i < len(s) && s[i] == '\'' {
			i++
			for ; i < len(s) && s[i] != '\''; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				b.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("key=value connection string: unterminated quote")
			}
			i++
		} else {
			for ; i < len(s) && s[i] != ' ' && s[i] != '\t'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				b.WriteByte(s[i])
			}
		}
		pairs = append(pairs, kvPair{key: key, value: b.String(), start: start, end: i})
	}
}

// parseKeyValue takes a libpq key=value string for PostgreSQL, opened with
// pgx, which reads that form too. schedlock's x- options cannot ride in it;
// use a URL for those. Its values come from splitKeyValue, not
// pgconn.ParseConfig: importing pgx here would link it into every
// program that opens a DSN, whatever backend it uses, and ParseConfig
// would put $PG* variables and a socket default into Where and the
// scrubber in place of what the string says.
func parseKeyValue(body string) (*DSN, error) {
	pairs, err := splitKeyValue(body)
	if err != nil {
		return nil, err
	}
	kv := map[string]string{}
	for _, p := range pairs {
		kv[p.key] = p.value
	}
	host, port := kv["host"], kv["port"]
	if host == "" {
		host = "localhost"
	}
	if port == "" {
		port = "5432"
	}
	w := net.JoinHostPort(host, port)
	if strings.HasPrefix(host, "/") {
		w = host
	}
	entry, err := entryFor(FamilyPostgres)
	if err != nil {
		return nil, err
	}
	if err := checkConn(entry, body); err != nil {
		return nil, err
	}
	d := &DSN{Family: entry.Name, Scheme: "postgres", Where: w, conn: body, scrub: &Scrubber{}, entry: entry}
	d.scrub.Add(kv["password"], kv["user"], kv["dbname"], host, "postgres")
	d.scrub.Add(kv["sslpassword"], kv["user"], kv["dbname"], host, "postgres")
	return d, nil
}

// keyValuePasswordKeyRE finds a password key of a key=value string and
// its '=' (with the spaces libpq allows around it).
var keyValuePasswordKeyRE = regexp.MustCompile(`(?i)(?:^|[\s'])(?:ssl)?password\s*=\s*`)

// isKeyValuePasswordKey reports whether key (of a key=value string) holds
// a password: libpq's password and sslpassword.
func isKeyValuePasswordKey(key string) bool {
	return strings.EqualFold(key, "password") || strings.EqualFold(key, "sslpassword")
}

// keyValuePasswordSpans locates the password value of a key=value string.
func keyValuePasswordSpans(s string) []span {
	pairs, err := splitKeyValue(s)
	if err != nil {
		// Unparseable: mask from the password key to the end.
		if m := keyValuePasswordKeyRE.FindStringIndex(s); m != nil {
			return []span{{m[1], len(s)}}
		}
		return nil
	}
	var spans []span
	for _, p := range pairs {
		if isKeyValuePasswordKey(p.key) {
			spans = append(spans, span{p.start, p.end})
		}
	}
	return spans
}
