// Package elide shortens values quoted in messages, so one error line stays
// readable however long the input it quotes (a DSN, a lock name, an owner)
// was.
package elide

import (
	"strconv"
	"unicode/utf8"
)

// MaxRunes is how many characters of a value Quote and String keep.
const MaxRunes = 64

// String returns s when it has at most max characters (runes, or bytes of
// invalid UTF-8), else its first max-1 characters, "…" and the full length
// in bytes: "abc…(131072 bytes)". max below 1 is taken as 1.
func String(s string, max int) string {
	if max < 1 {
		max = 1
	}
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	cut, n := 0, 0
	for i := range s {
		if n == max-1 {
			cut = i
			break
		}
		n++
	}
	// A cut in invalid UTF-8 still falls on a byte boundary that range
	// produced, so the prefix stays as valid as the input was.
	return s[:cut] + "…(" + strconv.Itoa(len(s)) + " bytes)"
}

// Quote is strconv.Quote of s cut to MaxRunes characters (see QuoteN).
func Quote(s string) string { return QuoteN(s, MaxRunes) }

// QuoteN is strconv.Quote of s cut to max characters like String; the
// length note stays outside the quotes: "\"abc…\" (131072 bytes)".
func QuoteN(s string, max int) string {
	if max < 1 {
		max = 1
	}
	if utf8.RuneCountInString(s) <= max {
		return strconv.Quote(s)
	}
	cut, n := 0, 0
	for i := range s {
		if n == max-1 {
			cut = i
			break
		}
		n++
	}
	return strconv.Quote(s[:cut]+"…") + " (" + strconv.Itoa(len(s)) + " bytes)"
}

// MaxArgRunes is how many characters of a string argument Args keeps:
// enough for most file paths and any qualified table name, short enough
// that a message quoting two of them stays within one line of about 300
// bytes.
const MaxArgRunes = 64

// Whole marks a message argument that Args must not cut: text the program
// composed itself, such as a list of the valid values or the description of
// a lock's holder, as opposed to input the message quotes. It formats as
// the plain string with %s and %q.
type Whole string

// Args returns args with every string longer than MaxArgRunes characters
// cut by String, for the arguments of a message format:
// fmt.Errorf(format, elide.Args(args)...). Errors, Whole strings and other
// values pass unchanged; args itself is never modified.
func Args(args []any) []any {
	out := args
	copied := false
	for i, a := range args {
		s, ok := a.(string)
		if !ok || len(s) <= MaxArgRunes {
			continue
		}
		if !copied {
			out, copied = append([]any(nil), args...), true
		}
		out[i] = String(s, MaxArgRunes)
	}
	return out
}
