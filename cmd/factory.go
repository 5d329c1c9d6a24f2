package cmd

import (
	"os"

	"github.com/schedlock/schedlock/internal/dsn"
	"github.com/schedlock/schedlock/internal/iostreams"
)

// Factory is what commands need from the outside world. Tests build one
// with in-memory streams, their own environment and cache directory.
type Factory struct {
	IO *iostreams.IOStreams
	// Getenv reads an environment variable (os.Getenv by default).
	Getenv func(string) string
	// CacheDir returns the user's cache directory (os.UserCacheDir by
	// default); selfcheck keeps its embedded SQLite file under it.
	CacheDir func() (string, error)
	// Scrubber learns every password the command parses; errors and output
	// pass through it before they are shown.
	Scrubber *dsn.Scrubber
}

// NewFactory returns the factory of the real process.
func NewFactory() *Factory {
	return &Factory{IO: iostreams.System(), Getenv: os.Getenv, CacheDir: os.UserCacheDir, Scrubber: &dsn.Scrubber{}}
}
