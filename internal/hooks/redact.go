package hooks

import (
	"net/url"
	"slices"
	"strings"
)

// mask replaces what a redacted URL hides.
const mask = "xxxxx"

// RedactURL returns u for messages with everything that may be a secret
// masked: the user info, the path of base (a healthchecks.io ping URL is
// /<uuid> or /<ping key>/<slug>, and knowing it is enough to report for the
// job) and every query value. What the event added to base (/start,
// /fail, /<exit code>) stays readable. base nil: u's whole path is masked.
func RedactURL(u, base *url.URL) string {
	if u == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(u.Scheme + "://")
	if u.User != nil {
		b.WriteString(mask + "@")
	}
	b.WriteString(u.Host)
	path := u.EscapedPath()
	rest := ""
	if base != nil {
		bp := strings.TrimSuffix(base.EscapedPath(), "/")
		if strings.HasPrefix(path, bp) {
			path, rest = bp, strings.TrimPrefix(u.EscapedPath(), bp)
		}
	}
	if path != "" && path != "/" {
		b.WriteString("/" + mask)
	}
	b.WriteString(rest)
	if u.RawQuery != "" {
		q := u.Query()
		keys := make([]string, 0, len(q))
		for k := range q {
			keys = append(keys, url.QueryEscape(k)+"="+mask)
		}
		slices.Sort(keys)
		b.WriteString("?" + strings.Join(keys, "&"))
	}
	return b.String()
}

// Redact is RedactURL for a raw value: a URL redacted, anything else (a
// command, a value that does not parse) cut to its first word.
func Redact(raw string) string {
	if u, err := url.Parse(strings.TrimSpace(raw)); err == nil && u.Scheme != "" && u.Host != "" {
		return RedactURL(u, nil)
	}
	if i := strings.Index(raw, "://"); i >= 0 {
		return raw[:i+3] + mask
	}
	return CommandName(raw)
}

// Secrets returns the parts of a hook URL that messages must never show,
// for a scrubber: the password, the whole URL and its path, and the query
// values.
func Secrets(h Hook) []string {
	if h.URL == nil {
		return nil
	}
	out := []string{h.URL.String()}
	if p, ok := h.URL.User.Password(); ok {
		out = append(out, p)
	}
	if p := strings.Trim(h.URL.Path, "/"); len(p) >= 8 {
		out = append(out, p)
	}
	for _, vs := range h.URL.Query() {
		for _, v := range vs {
			if len(v) >= 8 {
				out = append(out, v)
			}
		}
	}
	return out
}
