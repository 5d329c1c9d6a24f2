package cmd

import (
	"strings"
	"testing"
)

// maxErrorLine is the longest error line a command may print, however long
// the input it refuses: about 300 bytes (the longest messages, such as the
// list of supported schemes, which grows with the backends, run over it).
const maxErrorLine = 360

// TestLongInputsGiveShortErrors: a huge DSN, lock name, owner, table or
// pattern is refused (or reported) in one line of at most maxErrorLine
// bytes that quotes only the start of the value.
func TestLongInputsGiveShortErrors(t *testing.T) {
	path, _ := lockFile(t)
	huge := strings.Repeat("x", 131072)
	cases := []struct {
		what string
		args []string
	}{
		{"DSN over 64 KiB", []string{"locks", "ls", "--dsn", "postgres://ops:s3cr3t@db1/jobs?" + huge}},
		{"DSN of 60 KB that names no database", []string{"locks", "ls", "--dsn", huge[:60000]}},
		{"DSN of 60 KB with an unknown scheme", []string{"locks", "ls", "--dsn", huge[:60000] + "://h/db"}},
		{"DSN of 60 KB with a long x-table", []string{"locks", "ls", "--dsn", path + "?x-table=" + huge[:60000]}},
		{"unlock of a 128 KB name", []string{"unlock", huge, "--dsn", path, "--yes"}},
		{"unlock with a 128 KB owner", []string{"unlock", "held-job", "--dsn", path, "--yes", "--owner", huge}},
		{"unlock, 128 KB table", []string{"unlock", "held-job", "--dsn", path, "--yes", "--table", huge}},
		{"unlock, 128 KB preset", []string{"unlock", "held-job", "--dsn", path, "--yes", "--preset", huge}},
		{"locks ls, 128 KB bad pattern", []string{"locks", "ls", "--dsn", path, "--name", "[" + huge}},
		{"locks ls, 128 KB state", []string{"locks", "ls", "--dsn", path, "--state", huge}},
		{"unlock of a name with a NUL", []string{"unlock", "held-job\x00" + huge, "--dsn", path, "--yes"}},
	}
	for _, tc := range cases {
		t.Run(tc.what, func(t *testing.T) {
			r := runWithInput(t, false, "", tc.args...)
			if r.err == nil {
				t.Fatalf("no error; stdout %d bytes", len(r.stdout))
			}
			msg := r.err.Error()
			if len(msg) > maxErrorLine || strings.Contains(msg, "\n") {
				t.Errorf("error line is %d bytes: %.400q", len(msg), msg)
			}
			if strings.Contains(msg, "s3cr3t") {
				t.Errorf("error shows the password: %.400q", msg)
			}
		})
	}
}
