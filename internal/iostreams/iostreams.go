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
	noColor   bool

	// termWidth measures the terminal; nil: unknown. width overrides it
	// when positive (tests).
	termWidth func() int
	width     int
}

// DefaultTerminalWidth is the width of a terminal that cannot be measured
// and sets no $COLUMNS.
const DefaultTerminalWidth = 80

// System returns the process's streams, with terminal detection on the real
// file descriptors and colour disabled when NO_COLOR is set to a non-empty
// value (no-color.org).
func System() *IOStreams {
	noColor := os.Getenv("NO_COLOR") != ""
	return &IOStreams{
		In:        os.Stdin,
		Out:       os.Stdout,
		ErrOut:    os.Stderr,
		stdinTTY:  isTerminal(os.Stdin),
		stdoutTTY: isTerminal(os.Stdout),
		stderrTTY: isTerminal(os.Stderr),
		noColor:   noColor,
		termWidth: systemTerminalWidth,
	}
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

// IsStdoutTTY reports whether output goes to a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.stdoutTTY }

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

// DisableColor turns colour off whatever the terminal (the --no-color
// flag). Nothing turns it back on: NO_COLOR and --no-color both win.
func (s *IOStreams) DisableColor() { s.noColor = true }

// ColorEnabled reports whether Out may carry ANSI colour: only on a terminal,
// and never with NO_COLOR or --no-color.
func (s *IOStreams) ColorEnabled() bool { return s.stdoutTTY && !s.noColor }

// CanPrompt reports whether the user can be asked a question: input and
// output are both terminals.
func (s *IOStreams) CanPrompt() bool { return s.stdinTTY && s.stdoutTTY }
