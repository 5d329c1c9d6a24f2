// Command schedlock proves, inspects and uses the database locks that keep
// scheduled jobs from running twice. See README.md and docs/.
package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/schedlock/schedlock/cmd"
	_ "github.com/schedlock/schedlock/dialects/all" // every dialect of this build
)

func main() {
	f := cmd.NewFactory()
	os.Exit(exitCode(cmd.Run(f, os.Args[1:]), f.IO.ErrOut))
}

// exitCode prints err as one line "schedlock: <message>" on stderr and
// returns the exit code cmd.ExitCode gives it.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return cmd.CodeOK
	}
	code := cmd.ExitCode(err)
	if log, ok := stderr.(errorLogger); ok { // --log-format json
		log.LogError(oneLine(err.Error()), code)
	} else {
		fmt.Fprintln(stderr, "schedlock: "+oneLine(err.Error()))
	}
	return code
}

// errorLogger is stderr under --log-format json: it logs the final error
// as a record of its own, with the exit code.
type errorLogger interface {
	LogError(msg string, exitCode int)
}

// oneLine folds a multi-line message (joined errors, driver output) onto
// one line.
func oneLine(s string) string {
	lines := strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, "; ")
}
