package cmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// selfcheckFile is the embedded SQLite database selfcheck uses when no DSN
// is given.
const selfcheckFile = "selfcheck.db"

// selfcheckDBPath returns $XDG_CACHE_HOME/schedlock/selfcheck.db, falling
// back to the user cache directory and then to a per-user directory under
// the system temp directory. It creates the schedlock directory (0700) but
// never removes anything.
func selfcheckDBPath(f *Factory) (string, error) {
	var bases []string
	if x := f.Getenv("XDG_CACHE_HOME"); x != "" && filepath.IsAbs(x) {
		bases = append(bases, x)
	}
	if d, err := f.CacheDir(); err == nil && d != "" {
		bases = append(bases, d)
	}
	var errs []error
	for _, base := range bases {
		dir := filepath.Join(base, "schedlock")
		if err := privateDir(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		return filepath.Join(dir, selfcheckFile), nil
	}
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("schedlock-%d", os.Getuid()))
	if err := privateDir(dir); err != nil {
		errs = append(errs, err)
		return "", fmt.Errorf("no directory for the selfcheck database: %w", errors.Join(errs...))
	}
	return filepath.Join(dir, selfcheckFile), nil
}

// privateDir makes dir (0700) and refuses a symlink in its place, which in
// a shared temp directory could point somewhere another user chose.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	switch {
	case err != nil:
		return err
	case fi.Mode()&os.ModeSymlink != 0 || !fi.IsDir():
		return fmt.Errorf("%s is not a plain directory", dir)
	}
	return nil
}
