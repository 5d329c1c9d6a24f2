package dsn

import (
	"sort"
	"strings"
)

// span is a half-open byte range of a string.
type span struct{ start, end int }

// passwordSpans finds where raw writes passwords: the user-info password of
// a URL (or of go-sql-driver's form) and password-like query parameters.
// It works on strings that do not parse, so that even the error about a
// malformed DSN hides its password; on odd input it may mask too much,
// never too little for the forms it knows.
func passwordSpans(raw string) []span {
	var spans []span
	// A string that reads as both key=value and go-sql-driver's form
	// ("host=h password='a@/b'", "A=:pw@tcp(h)/db") has the passwords of
	// both masked: Parse takes it as go-sql-driver's, the user may have
	// meant the other.
	native := isNativeMySQL(raw)
	if isKeyValue(raw) {
		spans = keyValuePasswordSpans(raw)
		if !native {
			return spans
		}
	}
	if native {
		// The user info is found even when the address is malformed.
		if p, _ := splitNativeMySQL(raw); p.passStart >= 0 {
			spans = append(spans, span{p.passStart, p.passEnd})
		}
		if q := strings.IndexByte(raw[strings.LastIndexByte(raw, '/')+1:], '?'); q >= 0 {
			base := strings.LastIndexByte(raw, '/') + 1 + q + 1
			spans = append(spans, queryPasswordSpans(raw[base:], base)...)
		}
		return mergeSpans(spans)
	}
	start := 0
	if i := strings.Index(raw, "://"); i >= 0 {
		start = i + 3
	} else if !looksLikePath(raw) {
		start = strings.IndexByte(raw, ':') + 1
	} else {
		start = -1
	}
	q := strings.IndexByte(raw, '?')
	if start >= 0 {
		end := len(raw)
		if q >= start {
			end = q
			// A raw '?' in the password ("u:?pw@h/db" parses as host u,
			// query "pw@h/db"): an '@' after the '?' ends the user info
			// rather than a query value when no '=' comes between them,
			// or when no '/' (no database path) comes before the '?'.
			at := strings.LastIndexByte(raw, '@')
			if at > q && (!strings.Contains(raw[q:at], "=") || !strings.Contains(raw[start:q], "/")) {
				end = at + 1
				if q2 := strings.IndexByte(raw[at:], '?'); q2 >= 0 {
					spans = append(spans, queryPasswordSpans(raw[at+q2+1:], at+q2+1)...)
				}
			}
		}
		if at := strings.LastIndexByte(raw[start:end], '@'); at >= 0 {
			info := raw[start : start+at]
			if c := strings.IndexByte(info, ':'); c >= 0 {
				spans = append(spans, span{start + c + 1, start + at})
			}
		}
	}
	if q >= 0 {
		spans = append(spans, queryPasswordSpans(raw[q+1:], q+1)...)
	}
	return mergeSpans(spans)
}

// queryPasswordSpans finds the values of password-like keys in query, whose
// first byte is at offset base of the whole string.
func queryPasswordSpans(query string, base int) []span {
	var spans []span
	if h := strings.IndexByte(query, '#'); h >= 0 {
		query = query[:h]
	}
	pos := base
	for _, part := range strings.Split(query, "&") {
		if key, _, ok := strings.Cut(part, "="); ok && isPasswordKey(key) {
			spans = append(spans, span{pos + len(key) + 1, pos + len(part)})
		}
		pos += len(part) + 1
	}
	return spans
}

// loosePasswordSpans is passwordSpans widened for a DSN that does not
// parse, whose delimiters cannot be trusted: a raw '/', '?' or '#' in a
// password ("postgres://u:pa?ss@h/db", "root:pa/ss@tcp(h)/db") ends the
// URL's user info early, so the user info is taken to run from the first
// ':' after the scheme to the last '@' of the whole string, and a
// key=value string is masked from any password key to its end.
func loosePasswordSpans(raw string) []span {
	spans := passwordSpans(raw)
	if isKeyValue(raw) {
		if m := keyValuePasswordKeyRE.FindStringIndex(raw); m != nil {
			spans = append(spans, span{m[1], len(raw)})
		}
		if !isNativeMySQL(raw) {
			return mergeSpans(spans)
		}
	}
	start := 0
	if i := strings.Index(raw, "://"); i >= 0 {
		start = i + 3
	}
	if at := strings.LastIndexByte(raw, '@'); at >= start {
		if c := strings.IndexByte(raw[start:at], ':'); c >= 0 {
			spans = append(spans, span{start + c + 1, at})
		}
	}
	return mergeSpans(spans)
}

// mergeSpans sorts spans and joins those that overlap.
func mergeSpans(spans []span) []span {
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	var out []span
	for _, s := range spans {
		if n := len(out); n > 0 && s.start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, s.end)
			continue
		}
		out = append(out, s)
	}
	return out
}

// redactRaw returns raw with every password span replaced by Mask, an
// empty password too: the text never tells whether there is one, nor how
// long it is.
func redactRaw(raw string) string { return maskSpans(raw, passwordSpans(raw)) }

// redactLoose is redactRaw for a DSN that does not parse
// (loosePasswordSpans).
func redactLoose(raw string) string { return maskSpans(raw, loosePasswordSpans(raw)) }

func maskSpans(raw string, spans []span) string {
	if len(spans) == 0 {
		return raw
	}
	var b strings.Builder
	last := 0
	for _, s := range spans {
		if s.start < last || s.end < s.start {
			continue
		}
		b.WriteString(raw[last:s.start])
		b.WriteString(Mask)
		last = s.end
	}
	b.WriteString(raw[last:])
	return b.String()
}

// guessPasswords returns what raw may write as passwords, even when raw
// does not parse, so parse errors can be scrubbed: each loose password
// span, and each of its pieces between URL delimiters, which is what a
// parser quotes when such a delimiter cut the password short (`invalid
// port ":pa" after host` for "postgres://u:pa#ss@h/db").
func guessPasswords(raw string) []string {
	var out []string
	for _, s := range loosePasswordSpans(raw) {
		if s.end <= s.start {
			continue
		}
		pw := raw[s.start:s.end]
		out = append(out, pw)
		for _, piece := range strings.FieldsFunc(pw, isURLDelimiter) {
			if piece != pw {
				out = append(out, piece)
			}
		}
	}
	return out
}

// isURLDelimiter reports whether r ends a part of a URL or of a
// key=value string.
func isURLDelimiter(r rune) bool { return strings.ContainsRune(":/?#@&=' \t", r) }
