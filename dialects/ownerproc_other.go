//go:build !unix

package dialects

// processRuns reports true: without a portable probe a process is taken to
// run, so no owner reads as gone.
func processRuns(int) bool { return true }
