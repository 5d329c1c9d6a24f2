package dsn

import (
	"errors"
	"net/url"
	"sort"
	"strings"
)

// Mask replaces a password wherever schedlock shows a DSN or an error.
const Mask = "xxxxx"

// minFreeTextLen is the shortest secret replaced wherever it appears in free
// text. A shorter one ("pw", "1") would turn every message into noise, so it
// is replaced only where it stands as a password (":pw@", "password=pw").
const minFreeTextLen = 4

// Scrubber removes known secrets from text and errors. The zero value scrubs
// nothing; Add secrets as DSNs are parsed. It is not safe for concurrent
// Add, but String and Error may run concurrently once secrets are added.
type Scrubber struct {
	// pairs are (secret form, replacement), longest form first.
	pairs [][2]string
}

// Add registers secret in every form it can take in a message: as written,
// URL-decoded, query-escaped, path-escaped, userinfo-escaped and as pgx
// escapes it. Words that are also public parts of the DSN (given in public,
// e.g. the user and database names) are replaced only in password position,
// so "postgres://postgres:postgres@…" still reads sensibly.
func (s *Scrubber) Add(secret string, public ...string) {
	s.add(secret, public)
	s.sort()
}

// AddAll registers each of secrets as Add does, none of them public.
func (s *Scrubber) AddAll(secrets ...string) {
	seen := map[string]bool{}
	for _, secret := range secrets {
		if !seen[secret] {
			seen[secret] = true
			s.add(secret, nil)
		}
	}
	s.sort()
}

// sort puts the longest forms first, so a secret is replaced before a
// shorter one it contains.
func (s *Scrubber) sort() {
	sort.SliceStable(s.pairs, func(i, j int) bool { return len(s.pairs[i][0]) > len(s.pairs[j][0]) })
}

func (s *Scrubber) add(secret string, public []string) {
	if secret == "" {
		return
	}
	forms := map[string]bool{secret: true}
	if dec, err := url.QueryUnescape(secret); err == nil {
		forms[dec] = true
	}
	if dec, err := url.PathUnescape(secret); err == nil {
		forms[dec] = true
	}
	for f := range forms {
		forms[url.QueryEscape(f)] = true
		forms[url.PathEscape(f)] = true
		forms[strings.ReplaceAll(url.QueryEscape(f), "+", "%20")] = true
		forms[strings.TrimPrefix(url.UserPassword("", f).String(), ":")] = true
	}
	for f := range forms {
		if f == "" {
			continue
		}
		if len(f) < minFreeTextLen || contains(public, f) {
			for _, ctx := range [][2]string{{":", "@"}, {"password=", ""}, {"password='", "'"}, {`password="`, `"`}, {"pwd=", ""}, {"pass=", ""}} {
				s.pairs = append(s.pairs, [2]string{ctx[0] + f + ctx[1], ctx[0] + Mask + ctx[1]})
			}
			continue
		}
		s.pairs = append(s.pairs, [2]string{f, Mask})
	}
}

// Merge adds every secret other knows.
func (s *Scrubber) Merge(other *Scrubber) {
	if other == nil {
		return
	}
	s.pairs = append(s.pairs, other.pairs...)
	sort.SliceStable(s.pairs, func(i, j int) bool { return len(s.pairs[i][0]) > len(s.pairs[j][0]) })
}

// Empty reports whether s knows no secret.
func (s *Scrubber) Empty() bool { return s == nil || len(s.pairs) == 0 }

// String returns text with every known secret replaced by Mask.
func (s *Scrubber) String(text string) string {
	if s == nil {
		return text
	}
	for _, p := range s.pairs {
		if strings.Contains(text, p[0]) {
			text = strings.ReplaceAll(text, p[0], p[1])
		}
	}
	return text
}

// Error returns err with its message scrubbed; errors.Is and errors.As still
// see the original chain. It returns nil for nil. The parts of the message
// in schedlock's own words (ownWords: a connect hint) stay as written.
func (s *Scrubber) Error(err error) error {
	if err == nil || s.Empty() {
		return err
	}
	msg := err.Error()
	clean := s.restoreOwnWords(s.String(msg), err)
	if clean == msg {
		return err
	}
	return &scrubbedError{msg: clean, err: err}
}

// ownWords is implemented by an error whose message has parts in
// schedlock's own words, the same whatever the password (ConnectError's
// hint). A secret masked there hides nothing, and would show what the
// password is: "the password in the URL is xxxxx" when it is "wrong".
type ownWords interface{ OwnWords() []string }

// restoreOwnWords puts back, in clean (err's message scrubbed), the own
// words of the first error in err's chain that has any.
func (s *Scrubber) restoreOwnWords(clean string, err error) string {
	var own ownWords
	if !errors.As(err, &own) {
		return clean
	}
	for _, words := range own.OwnWords() {
		if masked := s.String(words); masked != words {
			clean = strings.ReplaceAll(clean, masked, words)
		}
	}
	return clean
}

type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

func contains(list []string, s string) bool {
	for _, v := range list {
		if v != "" && strings.Contains(v, s) {
			return true
		}
	}
	return false
}
