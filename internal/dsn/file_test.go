package dsn

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestMissingFile(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "here.db")
	if err := os.WriteFile(existing, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "lcoks.db")
	cases := []struct {
		dsn     string
		missing bool
	}{
		{existing, false},
		{"sqlite:" + existing, false},
		{missing, true},
		{"sqlite:" + missing, true},
		{missing + "?x-create-file=true", false},
		{missing + "?x-create-file=false", true},
		{filepath.Join(dir, "no", "dir.db"), true},
		{"sqlite::memory:", false},
		{"postgres://app@db1/jobs", false},
	}
	for _, tc := range cases {
		d, err := Parse(tc.dsn)
		if err != nil {
			t.Fatalf("%s: %v", tc.dsn, err)
		}
		err = d.MissingFile()
		var mf *MissingFileError
		switch {
		case tc.missing && (!errors.As(err, &mf) || !errors.Is(err, fs.ErrNotExist)):
			t.Errorf("%s: %v, want a *MissingFileError matching fs.ErrNotExist", tc.dsn, err)
		case tc.missing && err.Error() != "SQLite file "+d.Path+" does not exist":
			t.Errorf("%s: %q", tc.dsn, err)
		case !tc.missing && err != nil:
			t.Errorf("%s: %v, want nil", tc.dsn, err)
		}
	}
	if _, err := Parse(missing + "?x-create-file=yes-please"); err == nil {
		t.Error("x-create-file=yes-please was taken")
	}
}
