package output

import (
	"regexp"

	"github.com/fatih/color"
)

// Colour is a text colour of github.com/fatih/color (which tablewriter
// already brings in), used instead of hand-written escape codes.
type Colour = color.Color

// The colours of status words on a terminal. They are always enabled:
// whether to colour at all is the caller's decision (the on argument of
// Paint: a terminal, --no-color, NO_COLOR), not fatih/color's own guess
// from os.Stdout.
var (
	Green   = enabled(color.FgGreen)
	Yellow  = enabled(color.FgYellow)
	Red     = enabled(color.FgRed)
	BoldRed = enabled(color.FgRed, color.Bold)
)

func enabled(attrs ...color.Attribute) *color.Color {
	c := color.New(attrs...)
	c.EnableColor()
	return c
}

var ansiRE = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// StripANSI removes ANSI colour sequences.
func StripANSI(s string) string { return ansiRE.ReplaceAllString(s, "") }

// Paint is s in colour c when on is true (and s is not empty), else s.
func Paint(on bool, c *Colour, s string) string {
	if !on || s == "" {
		return s
	}
	return c.Sprint(s)
}

// PaintWord is word in its colour in colours when on is true; a word
// without a colour there is plain.
func PaintWord[W ~string](on bool, colours map[W]*Colour, word W) string {
	if c, ok := colours[word]; ok {
		return Paint(on, c, string(word))
	}
	return string(word)
}
