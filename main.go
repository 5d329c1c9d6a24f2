// Command schedlock proves, inspects and uses the database locks that keep
// scheduled jobs from running twice. See README.md and docs/.
package main

import (
	"context"
	"errors"
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
// returns the exit code its type calls for:
//
//	0   no error
//	1   any other error (connection, query, I/O)
//	2   *cmd.UsageError: bad flags, arguments, DSN or option values
//	3   *cmd.ExitError with Code 3: ran fine, the answer is negative
//	130 cmd.ErrInterrupted or context.Canceled: SIGINT/SIGTERM, declined
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return cmd.CodeOK
	}
	code := codeOf(err)
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

// codeOf is the exit code err calls for (see exitCode).
func codeOf(err error) int {
	var exit *cmd.ExitError
	var usage *cmd.UsageError
	switch {
	case errors.Is(err, cmd.ErrInterrupted), errors.Is(err, context.Canceled):
		return cmd.CodeInterrupted
	case errors.As(err, &usage):
		return cmd.CodeUsage
	case errors.As(err, &exit):
		return exit.Code
	}
	return cmd.CodeError
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
