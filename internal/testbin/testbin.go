// Package testbin builds the schedlock binary once for the run of a test
// package that drives it as a user would (test/e2e, test/locks).
package testbin

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Main is a TestMain: it builds schedlock from the module's main package
// in root (a path from the test package's directory, e.g. "../..") into
// a temporary directory, sets *binary to the built file, runs m, removes
// the directory and exits with m's code — 1, with the compiler's output,
// when the build fails.
func Main(m *testing.M, root string, binary *string) {
	dir, err := os.MkdirTemp("", "schedlock-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*binary = filepath.Join(dir, "schedlock")
	code := 1
	if err := build(*binary, root); err != nil {
		fmt.Fprintln(os.Stderr, "building schedlock:", err)
	} else {
		code = m.Run()
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// build compiles the main package in root to out with the go tool on
// PATH, else the one of the running toolchain.
func build(out, root string) error {
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	cmd := exec.Command(goTool, "build", "-o", out, ".")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%v: %s", err, stderr.String())
	}
	return nil
}
