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

// Colour and the terminal layout, by flag, environment and stream.
func TestColor(t *testing.T) {
	cases := []struct {
		name        string
		tty         bool
		env         map[string]string
		mode        ColorMode
		color, rend bool // ColorEnabled, IsStdoutTTY
	}{
		{"terminal", true, nil, ColorAuto, true, true},
		{"pipe", false, nil, ColorAuto, false, false},
		{"TERM=dumb", true, map[string]string{"TERM": "dumb"}, ColorAuto, false, true},
		{"NO_COLOR", true, map[string]string{"NO_COLOR": "1"}, ColorAuto, false, true},
		{"CLICOLOR_FORCE on a pipe", false, map[string]string{"CLICOLOR_FORCE": "1"}, ColorAuto, true, true},
		{"CLICOLOR_FORCE=0", false, map[string]string{"CLICOLOR_FORCE": "0"}, ColorAuto, false, false},
		{"CLICOLOR_FORCE with TERM=dumb", true, map[string]string{"CLICOLOR_FORCE": "1", "TERM": "dumb"}, ColorAuto, true, true},
		{"NO_COLOR wins over CLICOLOR_FORCE", false, map[string]string{"CLICOLOR_FORCE": "1", "NO_COLOR": "1"}, ColorAuto, false, false},
		{"--color always on a pipe", false, nil, ColorAlways, true, true},
		{"--color always wins over NO_COLOR", false, map[string]string{"NO_COLOR": "1"}, ColorAlways, true, true},
		{"--color always on a dumb terminal", true, map[string]string{"TERM": "dumb"}, ColorAlways, true, true},
		{"--color never", true, map[string]string{"CLICOLOR_FORCE": "1"}, ColorNever, false, true},
	}
	for _, tc := range cases {
		s, _, _, _ := Test()
		s.SetStdinTTY(true)
		s.SetStdoutTTY(tc.tty)
		s.ReadColorEnv(func(k string) string { return tc.env[k] })
		s.SetColorMode(tc.mode)
		if got := s.ColorEnabled(); got != tc.color {
			t.Errorf("%s: ColorEnabled %v, want %v", tc.name, got, tc.color)
		}
		if got := s.IsStdoutTTY(); got != tc.rend {
			t.Errorf("%s: IsStdoutTTY %v, want %v", tc.name, got, tc.rend)
		}
		if s.CanPrompt() != tc.tty {
			t.Errorf("%s: CanPrompt %v on a stdout that is a terminal: %v", tc.name, s.CanPrompt(), tc.tty)
		}
	}
}
