package exporter

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v3"
)

// exportedNames are the names of every metric the collector describes.
func exportedNames(t *testing.T) []string {
	t.Helper()
	ch := make(chan *prometheus.Desc, 64)
	(&collector{d: newDescs(nil)}).Describe(ch)
	close(ch)
	nameRE := regexp.MustCompile(`fqName: "([^"]+)"`)
	var names []string
	for d := range ch {
		m := nameRE.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("no name in %s", d)
		}
		names = append(names, m[1])
	}
	return names
}

// docs/monitoring.md lists every metric; the rules and the dashboard use
// only metrics the exporter exports (or names of recording rules), save
// the missed-run alert's two series, which the docs name as not exported
// yet.
func TestDocsRulesAndDashboardNameExportedMetrics(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "monitoring.md"))
	if err != nil {
		t.Fatal(err)
	}
	exported := exportedNames(t)
	for _, n := range exported {
		if !strings.Contains(string(doc), "| `"+n+"` |") {
			t.Errorf("docs/monitoring.md has no row for %s", n)
		}
	}
	rules, err := os.ReadFile(filepath.Join(root, "deploy", "monitoring", "schedlock-rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	dash, err := os.ReadFile(filepath.Join(root, "deploy", "monitoring", "schedlock-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(dash, &d); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	known := slices.Clone(exported)
	for _, m := range regexp.MustCompile(`record: (\S+)`).FindAllStringSubmatch(string(rules), -1) {
		known = append(known, m[1])
	}
	notYet := []string{}
	used := regexp.MustCompile(`schedlock[_:][a-z_:]+`)
	check := func(where, text string) {
		for _, n := range used.FindAllString(text, -1) {
			n = strings.TrimRight(n, "_:")
			if !slices.Contains(known, n) && !slices.Contains(notYet, n) {
				t.Errorf("%s uses %s, which is neither exported nor recorded", where, n)
			}
		}
	}
	var rf struct {
		Groups []struct {
			Rules []struct {
				Expr string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(rules, &rf); err != nil {
		t.Fatalf("rules: %v", err)
	}
	var exprs []string
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			exprs = append(exprs, r.Expr)
		}
	}
	if len(exprs) != 9 {
		t.Fatalf("found %d rule expressions, want 9", len(exprs))
	}
	for _, x := range exprs {
		check("schedlock-rules.yml", x)
	}
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			check("dashboard panel "+p.Title, tg.Expr)
		}
	}
	for _, n := range notYet {
		if !strings.Contains(string(doc), n) {
			t.Errorf("docs/monitoring.md does not say %s is not exported yet", n)
		}
	}
}
