//go:build unix

package metrics

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// promptly is the generous bound within which a refused Check or Update
// must return; it guards against a hang, it does not measure speed.
const promptly = 30 * time.Second

// snapshot describes everything in dir: each entry's name, type, mode and
// what it holds (content, link target, device number), so that a test
// can tell that nothing at or beside a path changed.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %s", e.Name(), fi.Mode())
		switch m := fi.Mode(); {
		case m&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, " -> %s", target)
		case m&os.ModeDevice != 0:
			fmt.Fprintf(&b, " rdev %d", fi.Sys().(*syscall.Stat_t).Rdev)
		case m.IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, " %q", data)
		case m.IsDir():
			fmt.Fprintf(&b, " [%s]", snapshot(t, p))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// returnsPromptly runs fn and fails the test when it has not returned
// within promptly.
func returnsPromptly(t *testing.T, what string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(promptly):
		t.Fatalf("%s did not return within %s", what, promptly)
		return nil
	}
}

// A foreign text file, with the content it holds.
const foreignText = "PermitRootLogin no\nPasswordAuthentication no\n"

// refusedCases are the things at PATH that Check and Update refuse, each
// made in dir by make, with the error they must match.
var refusedCases = []struct {
	name string
	make func(t *testing.T, dir, path string)
	want error
}{
	{"character device", func(t *testing.T, dir, path string) {
		// 1:3 is /dev/null's number; the tests run as root.
		if err := syscall.Mknod(path, syscall.S_IFCHR|0o666, int(mkdev(1, 3))); err != nil {
			t.Fatalf("mknod %s: %v (the tests need root)", path, err)
		}
	}, ErrNotRegular},
	{"FIFO", func(t *testing.T, dir, path string) {
		if err := syscall.Mkfifo(path, 0o644); err != nil {
			t.Fatal(err)
		}
	}, ErrNotRegular},
	{"directory", func(t *testing.T, dir, path string) {
		if err := os.Mkdir(path, 0o755); err != nil {
			t.Fatal(err)
		}
	}, ErrNotRegular},
	{"symlink to a foreign file", func(t *testing.T, dir, path string) {
		target := filepath.Join(dir, "sshd_config")
		if err := os.WriteFile(target, []byte(foreignText), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
	}, ErrNotRegular},
	{"symlink to a metrics file", func(t *testing.T, dir, path string) {
		target := filepath.Join(dir, "real.prom")
		if err := os.WriteFile(target, []byte(Runs+`{lock="a"} 1`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("real.prom", path); err != nil {
			t.Fatal(err)
		}
	}, ErrNotRegular},
	{"dangling symlink", func(t *testing.T, dir, path string) {
		if err := os.Symlink(filepath.Join(dir, "nowhere"), path); err != nil {
			t.Fatal(err)
		}
	}, ErrNotRegular},
	{"foreign file", func(t *testing.T, dir, path string) {
		if err := os.WriteFile(path, []byte(foreignText), 0o600); err != nil {
			t.Fatal(err)
		}
	}, ErrForeign},
	{"lock file is a FIFO", func(t *testing.T, dir, path string) {
		if err := syscall.Mkfifo(LockPath(path), 0o644); err != nil {
			t.Fatal(err)
		}
	}, ErrNotRegular},
	{"lock file is a symlink", func(t *testing.T, dir, path string) {
		if err := os.Symlink("/etc/passwd", LockPath(path)); err != nil {
			t.Fatal(err)
		}
	}, ErrNotRegular},
}

// mkdev is the device number of major:minor as Linux packs it.
func mkdev(major, minor uint64) uint64 {
	return (major&0xfff)<<8 | (major&^0xfff)<<32 | minor&0xff | (minor&^0xff)<<12
}

// A path that is not a regular file, or whose content is not schedlock's,
// is refused by Check and by Update, promptly, and nothing at or beside
// it changes: no mode, content or link target, no lock or temporary file.
func TestRefusedPathsChangeNothing(t *testing.T) {
	for _, c := range refusedCases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "schedlock.prom")
			c.make(t, dir, path)
			before := snapshot(t, dir)
			err := returnsPromptly(t, "Check", func() error { return Check(context.Background(), path) })
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), dir) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Check: %v, want one line matching %q naming the path", err, c.want)
			}
			err = returnsPromptly(t, "Update", func() error {
				return Update(context.Background(), path, Run{Lock: "a", Ended: time.Now()})
			})
			if !errors.Is(err, c.want) {
				t.Errorf("Update: %v, want %q", err, c.want)
			}
			if after := snapshot(t, dir); after != before {
				t.Errorf("the directory changed:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}

// Content that is not schedlock's metrics is refused whole, with the
// number of the first line that is not; the file is never rewritten.
func TestForeignContentIsRefused(t *testing.T) {
	for _, c := range []struct {
		name, text string
		line       int
	}{
		{"text", foreignText, 1},
		{"another metric", Runs + `{lock="a"} 1` + "\nnode_cpu_seconds_total{cpu=\"0\"} 3\n", 2},
		{"a comment", "# written by hand\n", 1},
		{"HELP of another metric", "# HELP node_load1 Load.\n", 1},
		{"damaged sample", Runs + `{lock="b} 3` + "\n", 1},
		{"sample without value", Runs + `{lock="b"}` + "\n", 1},
		{"sample with another label", Runs + `{job="b"} 3` + "\n", 1},
		{"prefix alone", "schedlock_ 1\n", 1},
		{"shell script", "#!/bin/sh\nschedlock run --name x -- true\n", 1},
		{"binary", "\x7fELF\x02\x01\x01\x00\x00", 1},
		{"one long line", Runs + `{lock="` + strings.Repeat("x", 70<<10) + `"} 1`, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "x.prom")
			if err := os.WriteFile(path, []byte(c.text), 0o640); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, dir)
			err := Update(context.Background(), path, Run{Lock: "a", Ended: time.Now()})
			if !errors.Is(err, ErrForeign) || !strings.Contains(err.Error(), fmt.Sprintf("line %d", c.line)) {
				t.Errorf("Update: %v, want ErrForeign at line %d", err, c.line)
			}
			if after := snapshot(t, dir); after != before {
				t.Errorf("the directory changed:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}

// An empty file, or one of blank lines, is schedlock's: it is filled.
func TestEmptyFileIsFilled(t *testing.T) {
	for _, text := range []string{"", "\n\n  \n"} {
		path := filepath.Join(t.TempDir(), "x.prom")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := Update(context.Background(), path, Run{Lock: "a", Ended: time.Now()}); err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if got, _ := value(parseFile(t, path), Runs, "a"); got != 1 {
			t.Errorf("%q: runs{a} = %v, want 1", text, got)
		}
	}
}

// A path with a control character is refused by its text: nothing is
// looked up or created, not even the directory's lock file.
func TestControlCharactersAreRefused(t *testing.T) {
	for _, name := range []string{"a\nb.prom", "a\tb.prom", "a\rb.prom", "a\x1bb.prom", "a\x7fb.prom", "a\u0085b.prom", ""} {
		dir := t.TempDir()
		path := filepath.Join(dir, name)
		if name == "" {
			path = ""
		}
		if err := CheckPath(path); !errors.Is(err, ErrBadPath) || strings.ContainsAny(err.Error(), "\n\r\t") {
			t.Errorf("CheckPath(%q) = %v, want one line matching ErrBadPath", path, err)
		}
		if err := Update(context.Background(), path, Run{Lock: "a", Ended: time.Now()}); !errors.Is(err, ErrBadPath) {
			t.Errorf("Update(%q) = %v, want ErrBadPath", path, err)
		}
		if after := snapshot(t, dir); after != "" {
			t.Errorf("%q: the directory holds\n%s", name, after)
		}
	}
	if err := CheckPath("/var/lib/node_exporter/textfile/schedlock é.prom"); err != nil {
		t.Errorf("a path with a space and a letter beyond ASCII: %v", err)
	}
}

// The lock file is .BASE.lock beside the file, which node_exporter does
// not read; a successful update leaves the file and it, nothing else.
func TestLockFileBesideTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "schedlock.prom")
	if got, want := LockPath(path), filepath.Join(dir, ".schedlock.prom.lock"); got != want {
		t.Fatalf("LockPath = %s, want %s", got, want)
	}
	if err := Update(context.Background(), path, Run{Lock: "a", Ended: time.Now()}); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{".schedlock.prom.lock", "schedlock.prom"}; !slices.Equal(names, want) {
		t.Errorf("the directory holds %v, want %v", names, want)
	}
}

// A lock file held by another process is waited for only as long as the
// context lets: Update then gives up without writing, and succeeds once
// the lock is free. A cancelled context (a signal) gives up too.
func TestLockWaitIsBounded(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.prom")
	if err := Update(context.Background(), path, Run{Lock: "a", Ended: time.Now()}); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(LockPath(path), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err = returnsPromptly(t, "Update", func() error { return Update(ctx, path, Run{Lock: "b", Ended: time.Now()}) })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Update with the lock held: %v, want the deadline", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	err = returnsPromptly(t, "Update", func() error { return Update(ctx, path, Run{Lock: "b", Ended: time.Now()}) })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Update cancelled with the lock held: %v, want context.Canceled", err)
	}
	// Give an abandoned update time to look at its context and stop.
	time.Sleep(200 * time.Millisecond)
	if after := snapshot(t, dir); after != before {
		t.Errorf("an update that gave up changed the directory:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if err := Update(context.Background(), path, Run{Lock: "b", Ended: time.Now()}); err != nil {
		t.Fatalf("Update once the lock is free: %v", err)
	}
	if got, _ := value(parseFile(t, path), Runs, "b"); got != 1 {
		t.Errorf("runs{b} = %v, want 1", got)
	}
}
