package mongodb

import (
	"net/url"
	"strings"

	"github.com/schedlock/schedlock/dialects"
)

// DefaultPort is the port of a host that names none.
const DefaultPort = "27017"

// DefaultDatabase is the database of a DSN whose path names none.
const DefaultDatabase = "schedlock"

// DefaultCollection is the native layout's collection when the DSN has no
// collection option and the table is the default one.
const DefaultCollection = "schedlock"

// ShedLockCollection is ShedLock's default collection (MongoLockProvider's
// DEFAULT_SHEDLOCK_COLLECTION_NAME), the shedlock preset's default.
const ShedLockCollection = "shedLock"

// config is what a MongoDB DSN says. uri holds the password: never print
// it.
type config struct {
	uri        string // the driver's URI: the DSN without schedlock's options
	database   string
	collection string // "" when the DSN names none
	srv        bool
	where      string // hosts, for messages
	user       string
	hasPass    bool
	pass       string
	rawPass    string // the password as the DSN spells it (URL-escaped)
}

// parseConfig reads mongodb://[user:pass@]host[:27017][,host2...][/DB][?opts]
// and mongodb+srv://. The path is the database (default "schedlock"); the
// option collection names the native layout's collection and is removed
// before the driver sees the URI; every other option is the driver's own
// (authSource, replicaSet, tls, w, readConcernLevel, …), which the driver
// checks when the backend opens.
func parseConfig(conn string) (config, error) {
	scheme, rest, ok := strings.Cut(conn, "://")
	if !ok {
		return config{}, dialects.Invalidf("a MongoDB DSN is mongodb://host:27017/DB or mongodb+srv://host/DB")
	}
	var c config
	switch strings.ToLower(scheme) {
	case "mongodb", "mongo":
	case "mongodb+srv":
		c.srv = true
	default:
		return config{}, dialects.Invalidf("unknown MongoDB scheme %q: use mongodb:// or mongodb+srv://", scheme)
	}
	u, err := dialects.SplitStoreURL(rest)
	if err != nil {
		return config{}, err
	}
	c.user, c.pass, c.hasPass, c.rawPass = u.User, u.Pass, u.HasPass, u.RawPass
	hosts, path, query := u.Hosts, u.Path, u.Query
	if hosts == "" {
		hosts = "localhost"
	}
	if c.srv && strings.Contains(hosts, ",") {
		return config{}, dialects.Invalidf("a mongodb+srv:// DSN names one host (the SRV record lists the servers)")
	}
	c.where = hosts
	db, err := url.PathUnescape(strings.Trim(path, "/"))
	if err != nil {
		return config{}, dialects.Invalidf("the database of the DSN is not valid URL escaping")
	}
	if db == "" {
		db = DefaultDatabase
	}
	if strings.ContainsAny(db, "/\\. \"$\x00") || len(db) > 63 {
		return config{}, dialects.Invalidf("the MongoDB database name %q may not hold / \\ . space \" or $, nor be longer than 63 bytes", db)
	}
	c.database = db
	var keep []string
	for _, kv := range strings.Split(query, "&") {
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		if k == "collection" {
			name, err := url.QueryUnescape(v)
			if err != nil {
				return config{}, dialects.Invalidf("the collection option of the DSN is not valid URL escaping")
			}
			if err := checkCollection(name); err != nil {
				return config{}, err
			}
			c.collection = name
			continue
		}
		keep = append(keep, kv)
	}
	c.uri = scheme + "://"
	if u.Userinfo != "" {
		c.uri += u.Userinfo + "@"
	}
	c.uri += hosts + "/" + url.PathEscape(db)
	if len(keep) > 0 {
		c.uri += "?" + strings.Join(keep, "&")
	}
	return c, nil
}

// checkCollection refuses a collection name MongoDB does not allow (empty,
// "$" or a NUL byte, a "system." prefix, more than 255 bytes).
func checkCollection(name string) error {
	if name == "" || strings.ContainsAny(name, "$\x00") || strings.HasPrefix(name, "system.") || len(name) > 255 {
		return dialects.Invalidf("the MongoDB collection %q must be non-empty, hold no $ or NUL, not start with \"system.\", and have at most 255 bytes", name)
	}
	return nil
}

// redact removes the password from a message (a driver error may quote
// what it was given).
func (c config) redact(msg string) string {
	if !c.hasPass || c.pass == "" {
		return msg
	}
	for _, p := range []string{c.pass, c.rawPass, url.PathEscape(c.pass), url.QueryEscape(c.pass)} {
		if p != "" {
			msg = strings.ReplaceAll(msg, p, "xxxxx")
		}
	}
	return msg
}
