package cmd

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// askYesNo writes prompt — the plan and its question, ending in "[y/N] ",
// already scrubbed of secrets — to stderr (the raw stream under a json log:
// a prompt is not a log record), reads one line from in and returns nil
// for y or yes in any case; anything else, end of input included, is an
// error matching ErrInterrupted: "declined; nothing changed" (exit 130).
func askYesNo(in io.Reader, stderr io.Writer, prompt string) error {
	stderr = rawStderr(stderr)
	if _, err := io.WriteString(stderr, prompt); err != nil {
		return err
	}
	answer, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read the answer: %w", err)
	}
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return nil
	}
	if !strings.HasSuffix(answer, "\n") {
		fmt.Fprintln(stderr)
	}
	return fmt.Errorf("%w: declined; nothing changed", ErrInterrupted)
}
