package cmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/schedlock/schedlock/internal/buildinfo"
	"github.com/schedlock/schedlock/internal/iostreams"
	"github.com/schedlock/schedlock/internal/output"
)

// VersionOptions are the inputs of `schedlock version`.
type VersionOptions struct {
	IO     *iostreams.IOStreams
	Format output.Format
}

// NewCmdVersion builds `schedlock version`. runF replaces the run function
// in tests.
func NewCmdVersion(f *Factory, g *GlobalOptions, runF func(*VersionOptions) error) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, build date and Go version",
		Example: `  schedlock version
  schedlock version -o json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			opts := &VersionOptions{IO: f.IO, Format: g.Format}
			if runF != nil {
				return runF(opts)
			}
			return versionRun(opts)
		},
	}
}

func versionRun(opts *VersionOptions) error {
	info := buildinfo.Get()
	switch opts.Format {
	case output.JSON:
		return output.WriteJSON(opts.IO.Out, info)
	case output.YAML:
		return output.WriteYAML(opts.IO.Out, info)
	}
	_, err := fmt.Fprintf(opts.IO.Out, "schedlock %s\ncommit:   %s\nbuilt:    %s\ngo:       %s %s\n", info.Version, info.Commit, info.Date, info.GoVersion, info.Platform)
	return err
}
