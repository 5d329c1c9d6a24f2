package dsn

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestScrubberForms(t *testing.T) {
	var s Scrubber
	s.Add("s3cr3t-P@ss w+rd", "app", "jobs")
	in := []string{
		"raw s3cr3t-P@ss w+rd",
		"query s3cr3t-P%40ss+w%2Brd",
		"path s3cr3t-P@ss%20w+rd",
		"pgx s3cr3t-P%40ss%20w%2Brd",
		"userinfo s3cr3t-P%40ss%20w+rd",
	}
	for _, text := range in {
		out := s.String(text)
		if strings.Contains(out, "s3cr3t") || !strings.Contains(out, Mask) {
			t.Errorf("String(%q) = %q", text, out)
		}
	}
}

func TestScrubberShortAndPublicSecretsOnlyInPasswordPosition(t *testing.T) {
	var s Scrubber
	s.Add("pw")
	s.Add("postgres", "postgres", "postgres")
	got := s.String(`failed to connect to user=postgres database=postgres: postgres://postgres:postgres@h/db password=pw upw`)
	want := `failed to connect to user=postgres database=postgres: postgres://postgres:xxxxx@h/db password=xxxxx upw`
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestScrubberErrorKeepsChain(t *testing.T) {
	var s Scrubber
	s.Add("hunter22")
	base := errors.New("boom")
	err := s.Error(fmt.Errorf("dial postgres://u:hunter22@h: %w", base))
	if strings.Contains(err.Error(), "hunter22") {
		t.Errorf("error not scrubbed: %v", err)
	}
	if !errors.Is(err, base) {
		t.Error("scrubbed error lost its chain")
	}
	if s.Error(nil) != nil {
		t.Error("Error(nil) is not nil")
	}
}

// A hint is in schedlock's own words, the same whatever the password: a
// password that is one of its words ("wrong", "password", "check") is
// masked where the server's words quote it, and the hint stays readable,
// since a masked word there would show what the password is.
func TestScrubberLeavesConnectHintsAsWritten(t *testing.T) {
	for _, secret := range []string{"wrong", "password", "check"} {
		var s Scrubber
		s.Add(secret)
		err := s.Error(fmt.Errorf("open: %w", &ConnectError{Family: "redis", Where: "h:6379",
			Reason: "auth failed for redis://:" + secret + "@h:6379 (" + secret + ")",
			Hint:   "check the user name and password in the URL: one is wrong"}))
		want := "open: cannot connect to redis at h:6379: auth failed for redis://:xxxxx@h:6379 (xxxxx) — check the user name and password in the URL: one is wrong"
		if got := err.Error(); got != want {
			t.Errorf("password %q:\n got %q\nwant %q", secret, got, want)
		}
	}
}
