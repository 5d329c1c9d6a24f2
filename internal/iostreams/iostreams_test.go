package iostreams

import "testing"

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
