package mongodb

import (
	"errors"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/dsn"
)

// TestParseConfig: the driver's URI keeps every option but collection,
// the database comes from the path, and mongodb+srv:// stays SRV.
func TestParseConfig(t *testing.T) {
	for _, tc := range []struct {
		in, uri, db, coll, where string
	}{
		{"mongodb://h", "mongodb://h/schedlock", "schedlock", "", "h"},
		{"mongodb://app:p%40ss@h1:27017,h2:27018/jobs?replicaSet=rs0&collection=locks&w=majority", "mongodb://app:p%40ss@h1:27017,h2:27018/jobs?replicaSet=rs0&w=majority", "jobs", "locks", "h1:27017,h2:27018"},
		{"mongodb+srv://app:pw@cluster0.example.net/jobs?authSource=admin", "mongodb+srv://app:pw@cluster0.example.net/jobs?authSource=admin", "jobs", "", "cluster0.example.net"},
	} {
		c, err := parseConfig(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if c.uri != tc.uri || c.database != tc.db || c.collection != tc.coll || c.where != tc.where {
			t.Errorf("%s: uri %q db %q collection %q where %q", tc.in, c.uri, c.database, c.collection, c.where)
		}
	}
	c, _ := parseConfig("mongodb://app:p%40ss@h/jobs")
	if got := c.redact("auth failed for app:p@ss and app:p%40ss"); strings.Contains(got, "p@ss") || strings.Contains(got, "p%40ss") {
		t.Errorf("redact: %q", got)
	}
	for _, bad := range []string{"mongodb://h/a.b", "mongodb://h/db?collection=", "mongodb://h/db?collection=system.users", "mongodb+srv://a,b/db", "mysql://h/db"} {
		if _, err := parseConfig(bad); !errors.Is(err, dialects.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", bad, err)
		}
	}
}

// TestDSNRedacted: the DSN layer parses both schemes and shows no
// password.
func TestDSNRedacted(t *testing.T) {
	for _, raw := range []string{"mongodb://app:s3cr3t@h:27017/jobs", "mongodb+srv://app:s3cr3t@cluster0.example.net/jobs?collection=locks"} {
		d, err := dsn.Parse(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if s := d.Redacted(); strings.Contains(s, "s3cr3t") || !strings.Contains(s, "xxxxx") {
			t.Errorf("redacted %q", s)
		}
	}
}
