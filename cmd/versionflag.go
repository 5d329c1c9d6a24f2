package cmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/schedlock/schedlock/internal/buildinfo"
)

// addVersionFlag gives root its --version flag: it prints
// "schedlock VERSION", the first line of `schedlock version`, and exits 0.
//
// Cobra's own flag (Command.Version) can only be reworded through
// SetVersionTemplate, and a text/template that runs lets the program call
// any method by name: the linker then keeps every exported method of every
// linked type (all of go-redis' commands, every protobuf accessor), about a
// fifth of the release binary. So the flag is an ordinary one, and the
// answer is given where Cobra goes for a root command that runs nothing:
// its help function. --help still wins when both are given, as before.
// Call it after the persistent flags, so -v stays --verbose.
func addVersionFlag(root *cobra.Command) {
	var show bool
	root.Flags().BoolVar(&show, "version", false, "print the version and exit (details: schedlock version)")
	help := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		if c == root && show {
			if asked, _ := c.Flags().GetBool("help"); !asked {
				fmt.Fprintf(c.OutOrStdout(), "schedlock %s\n", buildinfo.Get().Version)
				return
			}
		}
		help(c, args)
	})
}
