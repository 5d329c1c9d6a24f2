package kubernetes

import (
	"strings"
	"testing"
)

// TestLeaseNames: valid object names are kept, others are escaped under
// "x-" and read back exactly, too-long ones are hashed under "y-"; every
// result is a valid object name, and distinct names stay distinct.
func TestLeaseNames(t *testing.T) {
	seen := map[string]string{}
	for _, name := range []string{
		"nightly-report", "a", "kube-scheduler", "jobs.eu.nightly", "Nightly_Job", "prod::nightly",
		"x-kept", "y-kept", "x--4eightly", "-lead", "trail-", "a..b", "ünïcode", "job/a b",
		strings.Repeat("a", 253), strings.Repeat("a", 254), strings.Repeat("A", 100), strings.Repeat("A", 1000) + "x", strings.Repeat("A", 1000) + "y",
	} {
		lname, err := leaseName(name)
		if err != nil {
			t.Fatalf("leaseName(%.40q): %v", name, err)
		}
		if !validObjectName(lname) {
			t.Errorf("leaseName(%.40q) = %.60q, not a valid object name", name, lname)
		}
		if prev, dup := seen[lname]; dup {
			t.Errorf("%.40q and %.40q both map to %.60q", prev, name, lname)
		}
		seen[lname] = name
		switch {
		case isHashed(lname):
			if len(name) < 100 {
				t.Errorf("%.40q was hashed", name)
			}
			if got := lockNameOf(lname, map[string]string{NameAnnotation: name}); got != name {
				t.Errorf("lockNameOf(%q) with its annotation = %.40q, want %.40q", lname, got, name)
			}
		case lockName(lname) != name:
			t.Errorf("lockName(leaseName(%.40q)) = %.40q", name, lockName(lname))
		}
	}
	for _, kept := range []string{"nightly-report", "kube-scheduler", "jobs.eu.nightly"} {
		if l, _ := leaseName(kept); l != kept {
			t.Errorf("leaseName(%q) = %q, want it kept", kept, l)
		}
	}
	for _, bad := range []string{"", "a\x00b", "   ", "\xff"} {
		if _, err := leaseName(bad); err == nil {
			t.Errorf("leaseName(%q) accepted", bad)
		}
	}
}
