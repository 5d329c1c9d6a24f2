package claim_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/schedlock/schedlock/claim"
)

// A mistyped SQLite path is refused as lock.Open refuses it, and nothing
// is created; x-create-file=true creates it.
func TestOpenRefusesMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jbos.db")
	q, err := claim.Open(t.Context(), "sqlite:"+path, claim.Options{})
	if err == nil {
		q.Close()
		t.Fatal("Open of a missing file succeeded")
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("error %q does not match fs.ErrNotExist", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the refused Open left %s behind: %v", path, err)
	}
	q, err = claim.Open(t.Context(), "sqlite:"+path+"?x-create-file=true", claim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	q.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("x-create-file=true did not create %s: %v", path, err)
	}
}
