package iostreams

import (
	"os"
	"testing"
)

func TestColorOnlyOnATerminalWithoutNoColor(t *testing.T) {
	ios, _, _, _ := Test()
	if ios.ColorEnabled() {
		t.Error("colour on a pipe")
	}
	ios.SetStdoutTTY(true)
	if !ios.ColorEnabled() {
		t.Error("no colour on a terminal")
	}
	ios.DisableColor()
	if ios.ColorEnabled() {
		t.Error("colour after DisableColor")
	}
}

func TestSystemHonoursNoColor(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	ios := System()
	ios.SetStdoutTTY(true)
	if ios.ColorEnabled() {
		t.Error("colour with NO_COLOR=1")
	}
	t.Setenv("NO_COLOR", "")
	ios = System()
	ios.SetStdoutTTY(true)
	if !ios.ColorEnabled() {
		t.Error("an empty NO_COLOR disabled colour")
	}
}

func TestCanPromptNeedsBothTerminals(t *testing.T) {
	ios, _, _, _ := Test()
	ios.SetStdinTTY(true)
	if ios.CanPrompt() {
		t.Error("prompt with stdout piped")
	}
	ios.SetStdoutTTY(true)
	if !ios.CanPrompt() {
		t.Error("no prompt on a terminal")
	}
}

func TestTerminalWidth(t *testing.T) {
	ios, _, _, _ := Test()
	if w := ios.TerminalWidth(); w != 0 {
		t.Errorf("test streams: width %d, want 0 (no limit)", w)
	}
	ios.SetTerminalWidth(100)
	if w := ios.TerminalWidth(); w != 100 {
		t.Errorf("SetTerminalWidth(100): width %d", w)
	}

	// Under go test neither stdout nor stderr is a terminal that can be
	// measured, so a terminal's width falls back to $COLUMNS, then 80.
	t.Setenv("COLUMNS", "123")
	sys := System()
	sys.SetStdoutTTY(false)
	sys.SetStderrTTY(false)
	if w := sys.TerminalWidth(); w != 0 {
		t.Errorf("no terminal: width %d, want 0", w)
	}
	sys.SetStdoutTTY(true)
	if w := sys.TerminalWidth(); w != 123 && !isTerminal(os.Stdout) && !isTerminal(os.Stderr) {
		t.Errorf("COLUMNS=123: width %d", w)
	}
	t.Setenv("COLUMNS", "")
	if w := sys.TerminalWidth(); w != DefaultTerminalWidth && !isTerminal(os.Stdout) && !isTerminal(os.Stderr) {
		t.Errorf("no COLUMNS: width %d, want %d", w, DefaultTerminalWidth)
	}
}
