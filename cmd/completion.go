package cmd

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/schedlock/schedlock/internal/output"
)

// registerOutputCompletion completes -o/--output with the formats of the
// command being completed (its formatsAnnotation, else output.Common).
func registerOutputCompletion(root *cobra.Command) {
	_ = root.RegisterFlagCompletionFunc("output", func(c *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		formats := output.Common
		if a := c.Annotations[formatsAnnotation]; a != "" {
			formats = nil
			for _, s := range strings.Split(a, ",") {
				formats = append(formats, output.Format(s))
			}
		}
		names := make([]cobra.Completion, len(formats))
		for i, f := range formats {
			names[i] = string(f)
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	})
}
