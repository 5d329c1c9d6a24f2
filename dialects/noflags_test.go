package dialects_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// flagLiteral is a command line flag written out: "--strategy", "--force".
var flagLiteral = regexp.MustCompile(`--[a-z]`)

// otherTools start the literals that are another program's command line,
// whose flags are that program's, not schedlock's: the etcdctl command
// that grants a role the lock space, the kubectl commands that grant an
// account the Leases of a namespace.
var otherTools = []string{"etcdctl ", "kubectl "}

func isOtherToolsCommand(s string) bool {
	for _, p := range otherTools {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// TestNoFlagWording fails when a string literal in a non-test Go file of
// the backends (dialects/…) or of the user API (lock/) names a command
// line flag: they return structured remedies (Remedy, Term), and only the
// command line words them as flags.
func TestNoFlagWording(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, dir := range []string{"dialects", "lock"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			files++
			for _, hit := range flagLiterals(t, path) {
				t.Errorf("%s:%d: string literal names a flag: %s", rel, hit.line, hit.text)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files < 50 {
		t.Fatalf("checked only %d files: wrong root %s?", files, root)
	}
}

type flagHit struct {
	line int
	text string
}

// flagLiterals returns the string literals of the Go file at path that
// match flagLiteral.
func flagLiterals(t *testing.T, path string) []flagHit {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var hits []flagHit
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			s = lit.Value
		}
		if flagLiteral.MatchString(s) && !isOtherToolsCommand(s) {
			hits = append(hits, flagHit{line: fset.Position(lit.Pos()).Line, text: lit.Value})
		}
		return true
	})
	return hits
}

// TestFlagLiteralsFindsFlags keeps the lint honest: it must see a flag in
// a literal and none in comments.
func TestFlagLiteralsFindsFlags(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.go")
	src := "package x\n\n// use --strategy table in a comment is fine\nvar a = \"use --strategy table\"\nvar b = `--force`\nvar c = \"a-b -- c\"\nvar d = \"etcdctl role grant-permission r --prefix=true readwrite x/\"\n"
	if err := writeFile(path, src); err != nil {
		t.Fatal(err)
	}
	hits := flagLiterals(t, path)
	if len(hits) != 2 || hits[0].line != 4 || hits[1].line != 5 {
		t.Fatalf("hits %+v, want lines 4 and 5", hits)
	}
}

func writeFile(path, text string) error { return os.WriteFile(path, []byte(text), 0o644) }
