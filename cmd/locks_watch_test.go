package cmd

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/internal/iostreams"
)

// `locks ls --watch -o json` is a JSON Lines stream: each refresh is one
// line holding the whole listing, and every time in it has milliseconds.
// The test waits for three lines however slow the machine, then cancels.
func TestLocksLsWatchJSONLines(t *testing.T) {
	path, _ := lockFile(t)
	out := newListingsWriter("\n", 3)
	ios, _, _, _ := iostreams.Test()
	ios.Out = out
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ended := make(chan error, 1)
	go func() {
		ended <- Execute(ctx, testFactory(ios, map[string]string{}, t.TempDir()), []string{"locks", "ls", "--dsn", path, "--watch", "100ms", "-o", "json", "--quiet"})
	}()
	select {
	case <-out.reached:
	case err := <-ended:
		t.Fatalf("the watch ended by itself (%v) after:\n%s", err, out.String())
	case <-time.After(time.Minute):
		t.Fatalf("fewer than 3 listings in a minute at --watch 100ms:\n%s", out.String())
	}
	cancel()
	if err := <-ended; err != nil {
		t.Fatalf("a watch ended by its context is a normal end, got %v", err)
	}
	stamp := regexp.MustCompile(`"(locked_at|lock_until|since)":"([^"]*)"`)
	ms := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	for i, line := range lines {
		var listing []map[string]any
		if err := json.Unmarshal([]byte(line), &listing); err != nil {
			t.Fatalf("line %d is not one JSON document: %v\n%s", i+1, err, line)
		}
		if len(listing) != 3 {
			t.Errorf("line %d lists %d locks, want 3", i+1, len(listing))
		}
		for _, m := range stamp.FindAllStringSubmatch(line, -1) {
			if !ms.MatchString(m[2]) {
				t.Errorf("%s %q is not RFC 3339 UTC with milliseconds", m[1], m[2])
			}
		}
	}
	if len(lines) < 3 {
		t.Errorf("%d lines", len(lines))
	}
}

func TestLocksLsWatchYAMLDocuments(t *testing.T) {
	path, _ := lockFile(t)
	r := runWithInput(t, false, "", "locks", "ls", "--dsn", path, "--watch", "100ms", "--timeout", "2s", "-o", "yaml", "--quiet")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !strings.HasPrefix(r.stdout, "---\n- name: ") {
		t.Errorf("YAML watch output does not open each refresh with ---:\n%.300s", r.stdout)
	}
}
