// Package golden compares test output with golden files under testdata
// and rewrites them when the test binary runs with -update.
//
// It registers the single "update" flag of every test binary that imports
// it, so a package using Check must not define its own "update" flag.
//
//	golden.Check(t, filepath.Join("testdata", "schedlock.golden"), got)
//
// After an intended change run `go test ./pkg -update` and review the diff
// of testdata before committing it.
package golden

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata from the current output")

// Updating reports whether the test binary runs with -update, for tests
// that read golden files back and must not run while they are rewritten.
func Updating() bool { return *update }

// Check compares got with the file at path. With -update it writes got to
// path instead (creating its directory) and passes. A missing file or a
// difference fails t, naming the first differing line and showing both
// versions.
func Check[T []byte | string](t testing.TB, path string, got T) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if msg := Diff(string(want), string(got)); msg != "" {
		t.Errorf("%s differs from the current output (review, then run go test -update to rewrite it)\n%s\n--- got\n%s\n--- want\n%s", path, msg, got, want)
	}
}

// Diff describes the first line where got differs from want, as
// "line N:\n- want\n+ got", or returns "" when they are equal.
func Diff(want, got string) string {
	if want == got {
		return ""
	}
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; ; i++ {
		w, wok := line(wl, i)
		g, gok := line(gl, i)
		if w != g || wok != gok {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, w, g)
		}
	}
}

// line is lines[i], or "(end of file)" and false past the last line.
func line(lines []string, i int) (string, bool) {
	if i >= len(lines) {
		return "(end of file)", false
	}
	return lines[i], true
}
