package cmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// EnvDSNFile names a file holding the DSN, read when neither --dsn,
// --dsn-file nor $SCHEDLOCK_DSN is given (see ResolveDSN).
const EnvDSNFile = "SCHEDLOCK_DSN_FILE"

// DSNVariables are the environment variables a DSN may come from; `run`
// removes them from its command's environment unless --keep-env.
var DSNVariables = []string{EnvDSN, EnvDSNFile, EnvDatabaseURL}

// maxDSNFileSize bounds a DSN file; a DSN is far shorter.
const maxDSNFileSize = 64 << 10

// ResolveDSN returns the DSN to use and where it came from, first found
// of: --dsn, --dsn-file, $SCHEDLOCK_DSN, $SCHEDLOCK_DSN_FILE,
// $DATABASE_URL. Both are empty when none is set. A DSN file is read
// whole, its trailing newline trimmed; one that every user may read gets
// a warning on stderr (unless --quiet). --dsn and --dsn-file together, and
// a file that cannot be read or is empty, are errors.
func (g *GlobalOptions) ResolveDSN(f *Factory) (raw, source string, err error) {
	switch {
	case g.DSN != "" && g.DSNFile != "":
		return "", "", errors.New("--dsn and --dsn-file exclude each other: give one")
	case g.DSN != "":
		return g.DSN, "--dsn", nil
	case g.DSNFile != "":
		raw, err := g.readDSNFile(f, g.DSNFile)
		return raw, "--dsn-file " + g.DSNFile, err
	case f.Getenv(EnvDSN) != "":
		return f.Getenv(EnvDSN), "$" + EnvDSN, nil
	case f.Getenv(EnvDSNFile) != "":
		path := f.Getenv(EnvDSNFile)
		raw, err := g.readDSNFile(f, path)
		return raw, "$" + EnvDSNFile + " (" + path + ")", err
	case f.Getenv(EnvDatabaseURL) != "":
		return f.Getenv(EnvDatabaseURL), "$" + EnvDatabaseURL, nil
	}
	return "", "", nil
}

// readDSNFile reads the DSN kept in path.
func (g *GlobalOptions) readDSNFile(f *Factory, path string) (string, error) {
	file, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("cannot read the DSN file: %w", err)
	}
	defer file.Close()
	fi, err := file.Stat()
	switch {
	case err != nil:
		return "", fmt.Errorf("cannot read the DSN file: %w", err)
	case fi.IsDir():
		return "", fmt.Errorf("DSN file %s is a directory", path)
	}
	data, err := io.ReadAll(io.LimitReader(file, maxDSNFileSize+1))
	switch {
	case err != nil:
		return "", fmt.Errorf("cannot read the DSN file: %w", err)
	case len(data) > maxDSNFileSize:
		return "", fmt.Errorf("DSN file %s is larger than %d KiB: it should hold one DSN", path, maxDSNFileSize>>10)
	}
	raw := strings.TrimRight(string(data), "\r\n")
	if strings.TrimSpace(raw) == "" {
		return "", fmt.Errorf("DSN file %s is empty", path)
	}
	if perm := fi.Mode().Perm(); perm&0o004 != 0 && !g.Quiet {
		fmt.Fprintf(f.IO.ErrOut, "schedlock: warning: DSN file %s can be read by every user (mode %04o); chmod 600 %s\n", path, perm, path)
	}
	return raw, nil
}
