package cmd

import "context"

// exitCodeOf maps err to an exit code as main does.
func exitCodeOf(err error) int { return runExitCode(context.Background(), err) }
