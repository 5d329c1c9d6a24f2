package main

import (
	"debug/elf"
	"runtime"
	"strings"
	"testing"
)

// assertMethodsTrimmed fails when the linker kept every exported method of
// the binary at path (built without -s): what happens once a function
// that looks a method up by a name known only at run time is reachable —
// text/template's field evaluation, reached through a Cobra
// SetVersionTemplate or gRPC's golang.org/x/net/trace (build without
// -tags grpcnotrace). It cost the release binary about 10 MB
// (docs/install.md). The witness: go-redis' 600-odd command methods, of
// which schedlock calls a few.
func assertMethodsTrimmed(t *testing.T, path string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("ELF check on Linux only")
	}
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	commands := 0
	for _, s := range syms {
		switch {
		case s.Name == "text/template.(*state).evalField":
			t.Errorf("%s links text/template's method-by-name evaluation: the linker keeps every exported method (a Cobra template? gRPC without -tags grpcnotrace?)", path)
		case strings.HasPrefix(s.Name, "github.com/redis/go-redis/v9.cmdable."):
			commands++
		}
	}
	if commands == 0 {
		t.Fatalf("%s: no go-redis command method at all; is the Redis backend linked?", path)
	}
	if commands > 100 {
		t.Errorf("%s keeps %d go-redis command methods: unused exported methods are not trimmed", path, commands)
	}
}
