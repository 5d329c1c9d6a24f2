package dialects

import (
	"net/url"
	"strings"
	"unicode/utf8"
)

// WithURLParam returns the URL connection string conn with key=value
// added to its query, or conn unchanged when its query already has a
// parameter for which present answers true (a name the user wrote wins).
// key and value are escaped with %20 for a space, which every driver's
// parser reads back (pgx takes a literal "+" for a plus); the rest of the query keeps the user's spelling
// and order.
func WithURLParam(conn, key, value string, present func(key string) bool) string {
	head, fragment, _ := strings.Cut(conn, "#")
	base, query, _ := strings.Cut(head, "?")
	for _, part := range strings.Split(query, "&") {
		k, _, _ := strings.Cut(part, "=")
		if name, err := url.QueryUnescape(k); err == nil && part != "" && present(name) {
			return conn
		}
	}
	param := queryEscape(key) + "=" + queryEscape(value)
	switch {
	case query == "":
		head = base + "?" + param
	default:
		head = base + "?" + query + "&" + param
	}
	if fragment != "" {
		return head + "#" + fragment
	}
	return head
}

// queryEscape escapes s for a query, a space as %20.
func queryEscape(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
}

// CutAppName returns app cut to at most maxBytes bytes at a character
// boundary, for a client name the server keeps only the start of (or
// refuses the connection over): a lock name of any length must not stop
// the connection that takes it. app is returned unchanged when it fits;
// a byte that is not UTF-8 counts as one character.
func CutAppName(app string, maxBytes int) string {
	if len(app) <= maxBytes {
		return app
	}
	end := 0
	for end < len(app) {
		_, size := utf8.DecodeRuneInString(app[end:])
		if end+size > maxBytes {
			break
		}
		end += size
	}
	return app[:end]
}
