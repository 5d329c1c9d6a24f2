package dynamodb_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	_ "github.com/schedlock/schedlock/dialects/dynamodb"
	"github.com/schedlock/schedlock/internal/dsn"
)

// TestDSN checks the DSN forms: the region as host, the table as path,
// the aliases, the endpoint as what messages name, and the secret key
// kept out of the redacted DSN.
func TestDSN(t *testing.T) {
	for _, raw := range []string{
		"dynamodb://AKIDEXAMPLE:wJalrXUtnFEMI%2FK7MDENG@eu-west-1/locks?endpoint=http://127.0.0.1:8000",
		"dy://AKIDEXAMPLE:wJalrXUtnFEMI%2FK7MDENG@eu-west-1/locks?endpoint=http://127.0.0.1:8000",
		"dynamo://AKIDEXAMPLE:wJalrXUtnFEMI%2FK7MDENG@eu-west-1/locks?endpoint=http://127.0.0.1:8000",
	} {
		d, err := dsn.Parse(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if d.Family != "dynamodb" || d.Where != "http://127.0.0.1:8000" {
			t.Errorf("%s: family %q, where %q", raw, d.Family, d.Where)
		}
		if strings.Contains(d.Redacted(), "wJalr") || !strings.Contains(d.Redacted(), "AKIDEXAMPLE:xxxxx@") {
			t.Errorf("redacted %q", d.Redacted())
		}
		if !strings.HasPrefix(d.ConnString(), "dynamodb://") {
			t.Errorf("conn string of %s does not use the dynamodb scheme", d.Redacted())
		}
	}
	d, err := dsn.Parse("dynamodb://us-east-1/Shedlock?x-preset=shedlock")
	if err != nil {
		t.Fatal(err)
	}
	if d.Where != "dynamodb.us-east-1" {
		t.Errorf("where %q, want the region's service", d.Where)
	}
}

// TestBadDSNs are refused in one line matching ErrInvalid, without the
// secret.
func TestBadDSNs(t *testing.T) {
	for _, raw := range []string{
		"dynamodb://AKID:topsecret@us_east_1/locks",                       // not a region
		"dynamodb://AKID:topsecret@us-east-1/ab",                          // table too short
		"dynamodb://AKID:topsecret@us-east-1/a%20b",                       // not a table name
		"dynamodb://AKID:topsecret@us-east-1/locks?endpoint=ftp://h:1",    // not http
		"dynamodb://AKID:topsecret@us-east-1/locks?consistent=false",      // unknown option
		"dynamodb://AKID:@us-east-1/locks",                                // no secret
		"dynamodb://AKID:topsecret@us-east-1/locks?dial-timeout=-1s",      // bad timeout
		"dynamodb://AKID:topsecret@us-east-1/locks?endpoint=http://u:p@h", // user info in the endpoint
	} {
		_, err := dsn.Parse(raw)
		if err == nil {
			t.Errorf("%s: accepted", raw)
			continue
		}
		if strings.Contains(err.Error(), "topsecret") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %q shows the secret or spans lines", raw, err)
		}
		if !errors.Is(err, dialects.ErrInvalid) && !strings.Contains(err.Error(), "invalid DSN") {
			t.Errorf("%s: %v", raw, err)
		}
	}
}
