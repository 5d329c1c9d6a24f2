package main

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestReleaseShipsMonitoring: the archives hold the Prometheus rules, their
// unit tests and the Grafana dashboard of deploy/monitoring under
// monitoring/ (the packages: TestPackaging).
func TestReleaseShipsMonitoring(t *testing.T) {
	cfg := readGoreleaser(t)
	found := false
	for _, f := range cfg.Archives[0].Files {
		m, ok := f.(map[string]any)
		if ok && m["src"] == "deploy/monitoring/*" && m["dst"] == "monitoring" {
			found = true
		}
	}
	if !found {
		t.Errorf("the archives do not hold deploy/monitoring/* as monitoring/: %v", cfg.Archives[0].Files)
	}
	files, err := filepath.Glob("deploy/monitoring/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"deploy/monitoring/schedlock-rules.yml", "deploy/monitoring/schedlock-rules.test.yml", "deploy/monitoring/schedlock-dashboard.json"} {
		if !slices.Contains(files, want) {
			t.Errorf("deploy/monitoring lacks %s: %v", filepath.Base(want), files)
		}
	}
}
