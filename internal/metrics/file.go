package metrics

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"unicode"
)

// Errors of Check and Update, besides ErrForeign; each is wrapped in a
// message naming the path.
var (
	// ErrNoDirectory: the file's directory does not exist.
	ErrNoDirectory = errors.New("does not exist")
	// ErrNotRegular: the file, or its lock file, is there but is not a
	// regular file (a symbolic link, device, FIFO, socket or directory).
	ErrNotRegular = errors.New("not a regular file")
	// ErrBadPath: the path is empty or holds a control character (a
	// newline, a tab, …).
	ErrBadPath = errors.New("not a usable path")
)

// CheckPath refuses a path no metrics file should have: an empty one, or
// one with a control character. It looks at the text alone.
func CheckPath(path string) error {
	if path == "" {
		return fmt.Errorf("empty path: %w", ErrBadPath)
	}
	for i, c := range path {
		if unicode.IsControl(c) {
			return fmt.Errorf("%s holds the control character %s at byte %d: %w", strconv.Quote(path), strconv.QuoteRune(c), i, ErrBadPath)
		}
	}
	return nil
}

// LockPath is the lock file of the metrics file path: ".BASE.lock" in the
// same directory. The leading dot and the .lock ending keep it out of
// node_exporter's *.prom, and no metrics file's name and lock name meet:
// BASE is the whole base name.
func LockPath(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".lock")
}

// Check tells, without writing anything, whether Update may write the
// file at path: the path is usable, its directory exists, the file and
// its lock file are absent or regular files, and the file is schedlock's.
// It returns ctx's error, wrapped, when ctx ends first, even when the
// file system does not answer.
func Check(ctx context.Context, path string) error {
	return within(ctx, func() error {
		_, err := read(path)
		return err
	})
}

// Update records r in the file at path: reads it (a missing file is an
// empty one), applies r to r.Lock's lines and replaces the file
// atomically, holding the lock file meanwhile. Whatever Check refuses it
// refuses before it creates the lock file, and again, under the lock,
// before it writes. It returns when ctx ends (a deadline or a signal)
// whatever it was waiting for; an update cut short writes nothing.
func Update(ctx context.Context, path string, r Run) error {
	return within(ctx, func() error { return update(ctx, path, r) })
}

func update(ctx context.Context, path string, r Run) error {
	if _, err := read(path); err != nil {
		return err
	}
	unlock, err := lockFile(ctx, LockPath(path))
	if err != nil {
		return err
	}
	defer unlock()
	s, err := read(path)
	if err != nil {
		return err
	}
	s.apply(r)
	return writeAtomic(ctx, path, []byte(s.format()))
}

// within runs fn and returns its error, or ctx's (wrapped) as soon as
// ctx ends: fn then finishes on its own, and must look at ctx before it
// writes anything.
func within(ctx context.Context, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("gave up: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("gave up: %w", ctx.Err())
	}
}

// read checks path as Check does and returns the file's values.
func read(path string) (state, error) {
	if err := CheckPath(path); err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("directory %s %w", dir, ErrNoDirectory)
		}
		return nil, err
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	for _, p := range []string{path, LockPath(path)} {
		if err := regularOrAbsent(p); err != nil {
			return nil, err
		}
	}
	f, err := openRead(path)
	if errors.Is(err, fs.ErrNotExist) {
		return state{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parse(f, path)
}

// regularOrAbsent refuses anything at p but a regular file (a symbolic
// link is refused, not followed).
func regularOrAbsent(p string) error {
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	}
	return regular(p, fi)
}

// regular refuses fi, the file at p, unless it is a regular file.
func regular(p string, fi fs.FileInfo) error {
	if fi.Mode().IsRegular() {
		return nil
	}
	return fmt.Errorf("%s is %s, %w", p, kind(fi.Mode()), ErrNotRegular)
}

// kind names a file type that is not a regular file.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "of type " + m.Type().String()
}

// openRead opens path for reading without following a symbolic link and
// without blocking on a FIFO, and refuses what is not a regular file (the
// path may have changed since it was looked at).
func openRead(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|noFollow, 0)
	if err != nil {
		if isLoop(err) {
			return nil, fmt.Errorf("%s is a symbolic link, %w", path, ErrNotRegular)
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = regular(path, fi)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// writeAtomic writes data to a temporary file beside path (named so the
// collector, which reads *.prom, ignores it) and renames it to path,
// unless ctx has ended by then. The temporary file never stays.
func writeAtomic(ctx context.Context, path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename: nothing there
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("gave up: %w", err)
	}
	return os.Rename(tmp.Name(), path)
}
