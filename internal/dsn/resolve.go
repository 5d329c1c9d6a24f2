package dsn

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// The environment variables a DSN is read from when no flag gives one, in
// the order Resolve reads them.
const (
	EnvDSN         = "SCHEDLOCK_DSN"
	EnvDSNFile     = "SCHEDLOCK_DSN_FILE"
	EnvDatabaseURL = "DATABASE_URL"
)

// Variables are the environment variables a DSN may come from (they may
// hold a password).
var Variables = []string{EnvDSN, EnvDSNFile, EnvDatabaseURL}

// ErrNoDSN is Resolve's error when none of its sources gives a DSN.
var ErrNoDSN = errors.New("no database given: use --dsn URL or --dsn-file PATH, or set $" +
	EnvDSN + ", $" + EnvDSNFile + " or $" + EnvDatabaseURL)

// maxFileSize bounds a DSN file; a DSN is far shorter.
const maxFileSize = 64 << 10

// Sources are where Resolve looks for a DSN.
type Sources struct {
	// DSN is the value of --dsn ("" when not given).
	DSN string
	// File is the value of --dsn-file ("" when not given).
	File string
	// Getenv reads an environment variable (default os.Getenv).
	Getenv func(string) string
	// Warn receives a one-line warning when the DSN file can be read by
	// every user; nil: no warning.
	Warn io.Writer
}

// Resolve returns the DSN to use, as written, and where it came from
// (for messages: "--dsn", "$DATABASE_URL", …), first found of: --dsn,
// --dsn-file, $SCHEDLOCK_DSN, $SCHEDLOCK_DSN_FILE, $DATABASE_URL; an
// empty value counts as not set. A DSN file is read whole, its trailing
// newline trimmed. ErrNoDSN when none is set; --dsn and --dsn-file
// together, and a file that cannot be read, is a directory, is over
// 64 KiB or is empty, are errors that name the file.
func Resolve(s Sources) (raw, source string, err error) {
	getenv := s.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	switch {
	case s.DSN != "" && s.File != "":
		return "", "", errors.New("--dsn and --dsn-file exclude each other: give one")
	case s.DSN != "":
		return s.DSN, "--dsn", nil
	case s.File != "":
		raw, err := readFile(s.File, s.Warn)
		return raw, "--dsn-file " + s.File, err
	case getenv(EnvDSN) != "":
		return getenv(EnvDSN), "$" + EnvDSN, nil
	case getenv(EnvDSNFile) != "":
		path := getenv(EnvDSNFile)
		raw, err := readFile(path, s.Warn)
		return raw, "$" + EnvDSNFile + " (" + path + ")", err
	case getenv(EnvDatabaseURL) != "":
		return getenv(EnvDatabaseURL), "$" + EnvDatabaseURL, nil
	}
	return "", "", ErrNoDSN
}

// readFile reads the DSN kept in path.
func readFile(path string, warn io.Writer) (string, error) {
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
	data, err := io.ReadAll(io.LimitReader(file, maxFileSize+1))
	switch {
	case err != nil:
		return "", fmt.Errorf("cannot read the DSN file: %w", err)
	case len(data) > maxFileSize:
		return "", fmt.Errorf("DSN file %s is larger than %d KiB: it should hold one DSN", path, maxFileSize>>10)
	}
	raw := strings.TrimRight(string(data), "\r\n")
	if strings.TrimSpace(raw) == "" {
		return "", fmt.Errorf("DSN file %s is empty", path)
	}
	if perm := fi.Mode().Perm(); perm&0o004 != 0 && warn != nil {
		fmt.Fprintf(warn, "schedlock: warning: DSN file %s can be read by every user (mode %04o); chmod 600 %s\n", path, perm, path)
	}
	return raw, nil
}
