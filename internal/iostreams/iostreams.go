// Package iostreams holds the standard streams a command reads and writes,
// with what is known about them (terminal or not, colour allowed or not), so
// commands behave the same under test as in a terminal.
package iostreams

import (
	"bytes"
	"io"
	"os"
	"strconv"

	"golang.org/x/term"
)

// IOStreams are a command's input, output and diagnostic streams. Data goes
// to Out, everything meant for a person (progress, notes, errors) to ErrOut.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	stdinTTY  bool
	stdoutTTY bool
	stderrTTY bool

	// Colour: the mode --color/--no-color asked for, and what the
	// environment says (see ReadColorEnv).
	colorMode  ColorMode
	noColorEnv bool // $NO_COLOR set
	forceEnv   bool // $CLICOLOR_FORCE set and not 0
	dumbTerm   bool // $TERM is dumb

	// termWidth measures the terminal; nil: unknown. width overrides it
	// when positive (tests).
	termWidth func() int
	width     int
}

// DefaultTerminalWidth is the width of a terminal that cannot be measured
// and sets no $COLUMNS.
const DefaultTerminalWidth = 80

// ColorMode is what --color asks for.
type ColorMode string

// Colour modes.
const (
	// ColorAuto colours a terminal unless the environment says otherwise
	// (see ColorEnabled).
	ColorAuto ColorMode = "auto"
	// ColorAlways colours stdout and renders it as for a terminal even
	// when it is a pipe, for a pager such as less -R.
	ColorAlways ColorMode = "always"
	// ColorNever never colours (--no-color).
	ColorNever ColorMode = "never"
)

// System returns the process's streams, with terminal detection on the real
// file descriptors and the colour settings of the process's environment
// (ReadColorEnv).
func System() *IOStreams {
	s := &IOStreams{
		In:        os.Stdin,
		Out:       os.Stdout,
		ErrOut:    os.Stderr,
		stdinTTY:  isTerminal(os.Stdin),
		stdoutTTY: isTerminal(os.Stdout),
		stderrTTY: isTerminal(os.Stderr),
		termWidth: systemTerminalWidth,
	}
	s.ReadColorEnv(os.Getenv)
	return s
}

// ReadColorEnv takes the colour settings of the environment getenv reads:
// $NO_COLOR set to anything non-empty turns colour off (no-color.org);
// $CLICOLOR_FORCE set to anything but 0 forces it, as --color always does
// (bixense.com/clicolors), unless $NO_COLOR is set; $TERM=dumb has no
// colour unless forced.
func (s *IOStreams) ReadColorEnv(getenv func(string) string) {
	s.noColorEnv = getenv("NO_COLOR") != ""
	force := getenv("CLICOLOR_FORCE")
	s.forceEnv = force != "" && force != "0"
	s.dumbTerm = getenv("TERM") == "dumb"
}

// SetColorMode sets what --color asked for; the flag wins over the
// environment.
func (s *IOStreams) SetColorMode(m ColorMode) { s.colorMode = m }

// colorForced reports whether colour is on whatever stdout is: --color
// always, or $CLICOLOR_FORCE without $NO_COLOR and without --color.
func (s *IOStreams) colorForced() bool {
	switch s.colorMode {
	case ColorAlways:
		return true
	case ColorNever:
		return false
	}
	return s.forceEnv && !s.noColorEnv
}

// systemTerminalWidth is the column count of the terminal on stdout, else
// on stderr, else $COLUMNS, else DefaultTerminalWidth.
func systemTerminalWidth() int {
	for _, f := range []*os.File{os.Stdout, os.Stderr} {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	if w, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && w > 0 {
		return w
	}
	return DefaultTerminalWidth
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// Test returns streams backed by buffers, none of them a terminal. Flip the
// terminal flags with SetStdinTTY, SetStdoutTTY and SetStderrTTY.
func Test() (ios *IOStreams, in, out, errOut *bytes.Buffer) {
	in, out, errOut = &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}

// IsStdinTTY reports whether input comes from a terminal.
func (s *IOStreams) IsStdinTTY() bool { return s.stdinTTY }

// IsStdoutTTY reports whether output is rendered for a terminal: it goes
// to one, or colour is forced (--color always, $CLICOLOR_FORCE), which
// asks for the terminal's tables, in colour, on a pipe to a pager.
func (s *IOStreams) IsStdoutTTY() bool { return s.stdoutTTY || s.colorForced() }

// IsStderrTTY reports whether diagnostics go to a terminal.
func (s *IOStreams) IsStderrTTY() bool { return s.stderrTTY }

// SetStdinTTY overrides terminal detection for input.
func (s *IOStreams) SetStdinTTY(v bool) { s.stdinTTY = v }

// SetStdoutTTY overrides terminal detection for output.
func (s *IOStreams) SetStdoutTTY(v bool) { s.stdoutTTY = v }

// SetStderrTTY overrides terminal detection for diagnostics.
func (s *IOStreams) SetStderrTTY(v bool) { s.stderrTTY = v }

// TerminalWidth is the number of columns of the terminal that stdout or
// stderr is, measured at each call (the window may have been resized);
// 0 when neither is a terminal or the width is unknown (test streams
// without SetTerminalWidth): no limit.
func (s *IOStreams) TerminalWidth() int {
	switch {
	case s.width > 0:
		return s.width
	case s.termWidth == nil || !(s.stdoutTTY || s.stderrTTY):
		return 0
	}
	return s.termWidth()
}

// SetTerminalWidth fixes the terminal width TerminalWidth reports; 0 goes
// back to measuring it.
func (s *IOStreams) SetTerminalWidth(columns int) { s.width = columns }

// DisableColor turns colour off whatever the terminal and the environment
// (the --no-color flag, --color never).
func (s *IOStreams) DisableColor() { s.colorMode = ColorNever }

// ColorEnabled reports whether Out may carry ANSI colour. In order:
// --color never/--no-color: no; --color always: yes; $NO_COLOR: no;
// $CLICOLOR_FORCE (not 0): yes; else only on a terminal whose $TERM is
// not dumb.
func (s *IOStreams) ColorEnabled() bool {
	switch {
	case s.colorMode == ColorNever:
		return false
	case s.colorForced():
		return true
	case s.noColorEnv:
		return false
	}
	return s.stdoutTTY && !s.dumbTerm
}

// CanPrompt reports whether the user can be asked a question: input and
// output are both terminals (forced colour does not make a pipe one).
func (s *IOStreams) CanPrompt() bool { return s.stdinTTY && s.stdoutTTY }
