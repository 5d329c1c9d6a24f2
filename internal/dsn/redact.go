package dsn

import "strings"

// span is a half-open byte range of a string.
type span struct{ start, end int }

// passwordSpans finds where raw writes passwords: the user-info password of
// a URL (or of go-sql-driver's form) and password-like query parameters.
// It works on strings that do not parse, so that even the error about a
// malformed DSN hides its password; on odd input it may mask too much,
// never too little for the forms it knows.
func passwordSpans(raw string) []span {
	var spans []span
	if isKeyValue(raw) {
		return keyValuePasswordSpans(raw)
	}
	if isNativeMySQL(raw) {
		// The user info is found even when the address is malformed.
		if p, _ := splitNativeMySQL(raw); p.passStart >= 0 {
			spans = append(spans, span{p.passStart, p.passEnd})
		}
		if q := strings.IndexByte(raw[strings.LastIndexByte(raw, '/')+1:], '?'); q >= 0 {
			base := strings.LastIndexByte(raw, '/') + 1 + q + 1
			spans = append(spans, queryPasswordSpans(raw[base:], base)...)
		}
		return spans
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
	return spans
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
		if key, value, ok := strings.Cut(part, "="); ok && isPasswordKey(key) && value != "" {
			spans = append(spans, span{pos + len(key) + 1, pos + len(part)})
		}
		pos += len(part) + 1
	}
	return spans
}

// redactRaw returns raw with every password span replaced by Mask.
func redactRaw(raw string) string {
	spans := passwordSpans(raw)
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
		if s.end > s.start {
			b.WriteString(Mask)
		}
		last = s.end
	}
	b.WriteString(raw[last:])
	return b.String()
}

// guessPasswords returns the passwords raw writes, even when raw does not
// parse, so parse errors can be scrubbed.
func guessPasswords(raw string) []string {
	var out []string
	for _, s := range passwordSpans(raw) {
		if s.end > s.start {
			out = append(out, raw[s.start:s.end])
		}
	}
	return out
}
