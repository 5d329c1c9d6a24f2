//go:build unix

package proc

import (
	"bytes"
	"testing"
)

// Variables named in IO.Unset are not inherited; the others are.
func TestUnsetVarsAreNotInherited(t *testing.T) {
	t.Setenv("PROC_TEST_SECRET", "s3cret")
	t.Setenv("PROC_TEST_KEPT", "kept")
	var out bytes.Buffer
	c, err := Start([]string{"sh", "-c", `printf '%s|%s' "${PROC_TEST_SECRET-unset}" "${PROC_TEST_KEPT-unset}"`}, nil,
		IO{Out: &out, Unset: []string{"PROC_TEST_SECRET"}})
	if err != nil {
		t.Fatal(err)
	}
	c.ExitCode()
	if out.String() != "unset|kept" {
		t.Fatalf("child saw %q, want unset|kept", out.String())
	}
}
