package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that records failures instead of reporting them.
type recorder struct {
	testing.TB
	failed bool
	msg    string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.failed = true
	r.msg = format
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = true
	r.msg = format
	panic(r)
}

func (r *recorder) Fatal(args ...any) { r.Fatalf("fatal") }

// check runs Check on a recorder and reports whether it failed.
func check[T []byte | string](t *testing.T, path string, got T) *recorder {
	t.Helper()
	r := &recorder{TB: t}
	func() {
		defer func() {
			if p := recover(); p != nil && p != any(r) {
				panic(p)
			}
		}()
		Check(r, path, got)
	}()
	return r
}

func TestCheckComparesWithTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.golden")
	if err := os.WriteFile(path, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := check(t, path, "a\nb\n"); r.failed {
		t.Errorf("equal string failed: %s", r.msg)
	}
	if r := check(t, path, []byte("a\nb\n")); r.failed {
		t.Errorf("equal bytes failed: %s", r.msg)
	}
	r := check(t, path, "a\nc\n")
	if !r.failed || !strings.Contains(r.msg, "go test -update") {
		t.Errorf("different output: failed=%v msg=%q; want a failure naming go test -update", r.failed, r.msg)
	}
}

func TestCheckFailsOnAMissingFile(t *testing.T) {
	r := check(t, filepath.Join(t.TempDir(), "missing.golden"), "x")
	if !r.failed || !strings.Contains(r.msg, "-update") {
		t.Errorf("missing file: failed=%v msg=%q; want a failure naming -update", r.failed, r.msg)
	}
}

func TestCheckRewritesWithUpdate(t *testing.T) {
	defer func(old bool) { *update = old }(*update)
	*update = true
	path := filepath.Join(t.TempDir(), "new", "x.golden")
	if r := check(t, path, "fresh\n"); r.failed {
		t.Fatalf("update failed: %s", r.msg)
	}
	data, err := os.ReadFile(path)
	if err != nil || string(data) != "fresh\n" {
		t.Errorf("rewritten file = %q, %v; want %q", data, err, "fresh\n")
	}
}

func TestDiff(t *testing.T) {
	tests := []struct{ want, got, diff string }{
		{"a\nb\n", "a\nb\n", ""},
		{"a\nb\n", "a\nc\n", "line 2:\n- b\n+ c"},
		{"a\n", "a\nb", "line 2:\n- \n+ b"},
		{"a", "a\nb", "line 2:\n- (end of file)\n+ b"},
		{"a\nb", "a", "line 2:\n- b\n+ (end of file)"},
	}
	for _, tt := range tests {
		if got := Diff(tt.want, tt.got); got != tt.diff {
			t.Errorf("Diff(%q, %q) = %q, want %q", tt.want, tt.got, got, tt.diff)
		}
	}
}
