package output

import "regexp"

// ANSI colours for status words on a terminal.
const (
	ansiReset  = "\x1b[0m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiBold   = "\x1b[1m"
)

var ansiRE = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// StripANSI removes ANSI colour sequences.
func StripANSI(s string) string { return ansiRE.ReplaceAllString(s, "") }

// paint wraps s in colour code when on is true.
func paint(on bool, code, s string) string {
	if !on || s == "" {
		return s
	}
	return code + s + ansiReset
}
