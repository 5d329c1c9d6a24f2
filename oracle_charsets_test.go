package main

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOracleCharsets: the release build's go-ora (scripts/oracharsets,
// go-ora with its character set tables compressed) gives the same
// converter as go-ora itself for every character set ID, differs from
// the module only in the one file it replaces, and makes a program
// linking it much smaller. The program of
// scripts/oracharsets/testdata/dump prints a hash of every converter
// (every field, unexported ones included); it is built once against
// go-ora as published and once against the copy.
func TestOracleCharsets(t *testing.T) {
	out := t.TempDir()
	run := func(name string, args ...string) []byte {
		t.Helper()
		c := exec.Command(name, args...)
		var stderr bytes.Buffer
		c.Stderr = &stderr
		b, err := c.Output()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.Bytes())
		}
		return b
	}
	run("go", "run", "scripts/oracharsets/main.go", "-out", out)

	upstream, copied := filepath.Join(out, "dump-upstream"), filepath.Join(out, "dump-copy")
	run("go", "build", "-o", upstream, "./scripts/oracharsets/testdata/dump")
	run("go", "build", "-modfile="+filepath.Join(out, "go.mod"), "-o", copied, "./scripts/oracharsets/testdata/dump")
	want, got := run(upstream), run(copied)
	if n := bytes.Count(want, []byte("\n")); n < 200 {
		t.Fatalf("go-ora gave %d converters, want over 200:\n%s", n, want)
	}
	if !bytes.Equal(got, want) {
		wl, gl := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
		for i := range min(len(wl), len(gl)) {
			if wl[i] != gl[i] {
				t.Fatalf("converters differ first at line %d: go-ora %q, compressed %q (%d and %d lines)", i+1, wl[i], gl[i], len(wl), len(gl))
			}
		}
		t.Fatalf("converters differ: go-ora %d lines, compressed %d", len(wl), len(gl))
	}

	// The copy is go-ora's module without its tests, one file replaced.
	modDir := strings.TrimSpace(string(run("go", "list", "-m", "-f", "{{.Dir}}", "github.com/sijms/go-ora/v2")))
	copyDir := filepath.Join(out, "go-ora")
	replaced := filepath.Join("converters", "string_conversion_new.go")
	files := 0
	err := filepath.WalkDir(modDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, "_test.go") {
			return err
		}
		rel, _ := filepath.Rel(modDir, path)
		orig, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		cp, err := os.ReadFile(filepath.Join(copyDir, rel))
		if err != nil {
			t.Errorf("the copy lacks %s: %v", rel, err)
			return nil
		}
		files++
		if same := bytes.Equal(orig, cp); same == (rel == replaced) {
			t.Errorf("%s: same as go-ora's = %v", rel, same)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 20 {
		t.Errorf("compared %d files of go-ora", files)
	}

	su, err := os.Stat(upstream)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := os.Stat(copied)
	if err != nil {
		t.Fatal(err)
	}
	if saved := su.Size() - sc.Size(); saved < 8<<20 {
		t.Errorf("the compressed tables save %d bytes (%d → %d), want over 8 MiB", saved, su.Size(), sc.Size())
	}
}
