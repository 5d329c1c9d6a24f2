package exporter

import (
	"context"
	"fmt"
	"regexp"
	"sort"

	"github.com/schedlock/schedlock/dialects"
)

// Source reads the locks of one database: the listing of `locks ls` over
// one opened backend. Close gives its connections back.
type Source interface {
	ListLocks(ctx context.Context, opts dialects.ListOptions) (*dialects.Listing, error)
	Close() error
}

// OpenFunc connects to a target's database. The exporter calls it at the
// first refresh and again after any failed read, so a database that went
// away is reconnected by itself.
type OpenFunc func(ctx context.Context) (Source, error)

// Target is one database the exporter watches.
type Target struct {
	// Name is the value of the dsn label: a name from the targets file,
	// else the DSN with its password masked.
	Name string
	// Labels are extra labels of every series of this target (from the
	// targets file); targets without one of another's keys get "".
	Labels map[string]string
	// List selects what is read: the tables of the DSN's x-table/x-preset
	// or every known one, and the server's session locks. All is forced
	// on, so free rows are exported as "free".
	List dialects.ListOptions
	// Open connects.
	Open OpenFunc
}

// labelNameRE is what Prometheus accepts as a label name.
var labelNameRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// reservedLabels are the labels the exporter sets itself.
var reservedLabels = map[string]bool{
	"dsn": true, "lock": true, "namespace": true, "source": true, "state": true,
	"owner": true, "host": true, "application": true, "reason": true,
}

// CheckTargets refuses targets without a name or Open, two of one name,
// and extra labels that are not label names or that the exporter sets.
func CheckTargets(targets []Target) error {
	if len(targets) == 0 {
		return fmt.Errorf("no database to watch: give --dsn or --targets")
	}
	seen := map[string]bool{}
	for _, t := range targets {
		switch {
		case t.Name == "":
			return fmt.Errorf("a target has no name")
		case seen[t.Name]:
			return fmt.Errorf("two targets are named %q: give each its own name", t.Name)
		case t.Open == nil:
			return fmt.Errorf("target %q has no database", t.Name)
		}
		seen[t.Name] = true
		for k := range t.Labels {
			if !labelNameRE.MatchString(k) || len(k) > 2 && k[:2] == "__" {
				return fmt.Errorf("target %q: %q is not a label name (letters, digits and _, not starting with a digit or __)", t.Name, k)
			}
			if reservedLabels[k] {
				return fmt.Errorf("target %q: the label %q is set by the exporter; choose another name", t.Name, k)
			}
		}
	}
	return nil
}

// extraLabelNames are the extra label names of all targets, sorted: every
// target's series carry all of them, so that a metric keeps one label set.
func extraLabelNames(targets []Target) []string {
	set := map[string]bool{}
	for _, t := range targets {
		for k := range t.Labels {
			set[k] = true
		}
	}
	names := make([]string, 0, len(set))
	for k := range set {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
