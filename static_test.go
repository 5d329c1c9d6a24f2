package main

import (
	"debug/elf"
	"os"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// assertStatic fails unless the ELF binary at path needs no dynamic loader
// and no shared library: what `file` reports as "statically linked".
func assertStatic(t *testing.T, path string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("ELF check on Linux only")
	}
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s is dynamically linked (has an ELF interpreter): build it with CGO_ENABLED=0", path)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("%s links shared libraries %v: build it with CGO_ENABLED=0", path, libs)
	}
}

// TestReadmeBuildsStatic keeps every build command the README shows on the
// release's static build: scripts/build.sh, or go build with CGO_ENABLED=0.
func TestReadmeBuildsStatic(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	goBuild := regexp.MustCompile(`(^|[;&|]\s*|\s)go build\b`)
	found := false
	for _, line := range strings.Split(string(readme), "\n") {
		if !goBuild.MatchString(line) {
			continue
		}
		found = true
		if !strings.Contains(line, "CGO_ENABLED=0 go build") {
			t.Errorf("README builds a dynamically linked binary (no CGO_ENABLED=0): %q", line)
		}
	}
	if !found && !strings.Contains(string(readme), "scripts/build.sh") {
		t.Error("README shows no build command")
	}
}
