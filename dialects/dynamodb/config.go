package dynamodb

import (
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// DefaultDialTimeout bounds each request when the DSN sets no
// dial-timeout: a DynamoDB request answers in milliseconds, and a lease
// must not wait longer than this on a store that does not answer.
const DefaultDialTimeout = 5 * time.Second

// config is what a DynamoDB DSN says. It holds the secret key: never
// print it.
type config struct {
	region   string
	table    string // "" when the DSN names none: the preset's default
	endpoint string // "" for AWS itself
	profile  string
	keyID    string // static credentials from the DSN's user info
	secret   string
	timeout  time.Duration
}

// regionRE is an AWS region name ("us-east-1", "eu-central-2",
// "us-gov-west-1"), or a local server's made-up one ("local").
var regionRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,49}$`)

// tableRE is a DynamoDB table name: 3 to 255 letters, digits, "_", "-"
// and ".".
var tableRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{3,255}$`)

// parseConfig reads
//
//	dynamodb://[ACCESS_KEY_ID:SECRET_ACCESS_KEY@]REGION[/TABLE][?options]
//
// Options: endpoint (a local server such as http://127.0.0.1:8000, or a
// VPC endpoint), profile (a profile of the shared AWS config files), and
// dial-timeout (each request's bound, default 5s). Without user info the
// SDK's usual credential chain is used (environment, shared files and
// profile, web identity, SSO, ECS and EC2 roles).
func parseConfig(conn string) (config, error) {
	scheme, rest, ok := strings.Cut(conn, "://")
	if !ok || scheme != Name {
		return config{}, dialects.Invalidf("a DynamoDB DSN is dynamodb://REGION/TABLE")
	}
	rest, query, _ := strings.Cut(rest, "?")
	host, path, _ := strings.Cut(rest, "/")
	var c config
	if at := strings.LastIndex(host, "@"); at >= 0 {
		u, p, _ := strings.Cut(host[:at], ":")
		host = host[at+1:]
		var err error
		if c.keyID, err = url.PathUnescape(u); err != nil {
			return config{}, dialects.Invalidf("the access key ID of the DSN is not valid URL escaping")
		}
		if c.secret, err = url.PathUnescape(p); err != nil {
			return config{}, dialects.Invalidf("the secret access key of the DSN is not valid URL escaping")
		}
		if c.keyID == "" || c.secret == "" {
			return config{}, dialects.Invalidf("static credentials in a DynamoDB DSN are ACCESS_KEY_ID:SECRET_ACCESS_KEY@: both are needed")
		}
	}
	c.region = strings.ToLower(host)
	if !regionRE.MatchString(c.region) {
		return config{}, dialects.Invalidf("a DynamoDB DSN names its region as its host: dynamodb://us-east-1/TABLE")
	}
	c.table = strings.Trim(path, "/")
	if c.table != "" && !tableRE.MatchString(c.table) {
		return config{}, dialects.Invalidf("the DynamoDB table name %q must be 3 to 255 letters, digits, _, - and .", c.table)
	}
	c.timeout = DefaultDialTimeout
	values, err := url.ParseQuery(query)
	if err != nil {
		return config{}, dialects.Invalidf("the options of the DSN are not a valid query string")
	}
	for k, vs := range values {
		v := vs[len(vs)-1]
		switch k {
		case "endpoint":
			e, err := url.Parse(v)
			if err != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "" || e.User != nil {
				return config{}, dialects.Invalidf("endpoint must be an http:// or https:// URL without user info, such as http://127.0.0.1:8000")
			}
			c.endpoint = v
		case "profile":
			c.profile = v
		case "dial-timeout":
			d, err := dialects.PositiveDuration(k, v)
			if err != nil {
				return config{}, err
			}
			c.timeout = d
		default:
			return config{}, dialects.Invalidf("unknown DynamoDB DSN option %q: use endpoint, profile or dial-timeout", k)
		}
	}
	return c, nil
}

// where names the service for messages: the endpoint, or the region.
func (c config) where() string {
	if c.endpoint != "" {
		return c.endpoint
	}
	return "dynamodb." + c.region
}
