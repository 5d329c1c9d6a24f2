package dialects

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckNamespace(t *testing.T) {
	for _, ok := range []string{"", "prod", "eu-prod", "staging/2", "Ünïcode", strings.Repeat("n", MaxNamespaceRunes)} {
		if err := CheckNamespace(ok); err != nil {
			t.Errorf("CheckNamespace(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"a:b", ":", " ", "\t", "x\x00y", "\xff", "job*", "a?", "[x]", `a\b`, strings.Repeat("n", MaxNamespaceRunes+1)} {
		if err := CheckNamespace(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("CheckNamespace(%q): %v; want ErrInvalid", bad, err)
		}
	}
}

// TestNamespacedNameRoundTrip: SplitNamespace reverses NamespacedName for
// every valid namespace, whatever the name holds, and a name without a
// namespace that holds no "::" stays a bare name.
func TestNamespacedNameRoundTrip(t *testing.T) {
	for _, ns := range []string{"", "prod", "eu/prod"} {
		for _, name := range []string{"nightly", "a::b", "::", "x:", "jobs/nightly", " n "} {
			stored := NamespacedName(ns, name)
			gotNS, gotName := SplitNamespace(stored)
			if ns != "" && (gotNS != ns || gotName != name) {
				t.Errorf("SplitNamespace(%q) = %q, %q; want %q, %q", stored, gotNS, gotName, ns, name)
			}
		}
	}
	if got := NamespacedName("prod", "nightly"); got != "prod::nightly" {
		t.Errorf("NamespacedName = %q", got)
	}
	for _, bare := range []string{"nightly", "::x", "x::", "a:b", "a*::b"} {
		if ns, name := SplitNamespace(bare); ns != "" || name != bare {
			t.Errorf("SplitNamespace(%q) = %q, %q; want no namespace", bare, ns, name)
		}
	}
}

func TestApplyNamespace(t *testing.T) {
	entries := []LockEntry{{Name: "prod::a"}, {Name: "staging::a"}, {Name: "a"}, {Key: "42"}}
	all := ApplyNamespace(entries, "")
	if len(all) != 4 || all[0].Namespace != "prod" || all[0].Name != "a" || all[2].Namespace != "" || all[3].Key != "42" {
		t.Errorf("ApplyNamespace(all) = %+v", all)
	}
	if entries[0].Name != "prod::a" {
		t.Error("ApplyNamespace changed its input")
	}
	prod := ApplyNamespace(entries, "prod")
	if len(prod) != 1 || prod[0].Name != "a" || prod[0].Namespace != "prod" {
		t.Errorf("ApplyNamespace(prod) = %+v", prod)
	}
	if got := NamespacePatterns("prod", nil); len(got) != 1 || got[0] != "prod::*" {
		t.Errorf("NamespacePatterns(prod, nil) = %q", got)
	}
	if got := NamespacePatterns("prod", []string{"a*"}); got[0] != "prod::a*" {
		t.Errorf("NamespacePatterns(prod, a*) = %q", got)
	}
}

// A stored "NS::NAME" matches a --name glob as stored and by its name
// within the namespace, the name a listing shows.
func TestMatchesNameWithinNamespace(t *testing.T) {
	cases := []struct {
		stored  string
		pattern string
		want    bool
	}{
		{"staging::ns-job", "ns-job", true},
		{"staging::ns-job", "ns-*", true},
		{"staging::ns-job", "staging::ns-job", true},
		{"staging::ns-job", "staging::*", true},
		{"staging::ns-job", "*", true},
		{"staging::ns-job", "prod::ns-job", false},
		{"staging::ns-job", "staging", false},
		{"staging::ns-job", "other", false},
		{"ns-job", "ns-*", true},
		{"ns-job", "staging::ns-job", false},
		{"a*b::x", "x", false}, // no valid namespace: only the stored name
	}
	for _, tc := range cases {
		if got := (LockEntry{Name: tc.stored}).MatchesName([]string{tc.pattern}); got != tc.want {
			t.Errorf("%q matches %q: %v, want %v", tc.stored, tc.pattern, got, tc.want)
		}
	}
}

// A namespace the backend set (a table that keeps it: ShedLock's Redis
// environment) stays as it is — the name within it is not split again —
// selects the entry for that namespace, and its stored form matches a
// name pattern as a namespaced name does.
func TestBackendNamespace(t *testing.T) {
	entries := []LockEntry{
		{Name: "nightly", Namespace: "prod"},
		{Name: "a::b", Namespace: "prod"},
		{Name: "prod::old", Namespace: "default"},
		{Name: "staging::x"},
	}
	var got []string
	for _, e := range ApplyNamespace(entries, "") {
		got = append(got, e.Namespace+"|"+e.Name)
	}
	if want := "prod|nightly prod|a::b default|prod::old staging|x"; strings.Join(got, " ") != want {
		t.Errorf("ApplyNamespace: %q, want %q", strings.Join(got, " "), want)
	}
	if kept := ApplyNamespace(entries, "prod"); len(kept) != 2 || kept[0].Name != "nightly" || kept[1].Name != "a::b" {
		t.Errorf("ApplyNamespace prod: %+v, want nightly and a::b", kept)
	}
	for pattern, want := range map[string]bool{"nightly": true, "prod::nightly": true, "prod::*": true, "staging::nightly": false, "default::nightly": false} {
		if got := entries[0].MatchesName([]string{pattern}); got != want {
			t.Errorf("MatchesName(%q) = %v, want %v", pattern, got, want)
		}
	}
}

// PlaceNamespace leaves the names the namespace without a backend entry
// that places it, and refuses a bad namespace before asking the entry.
func TestPlaceNamespace(t *testing.T) {
	asked := 0
	d := &Dialect{NamespaceTable: func(t Table, ns string) (Table, bool, error) {
		asked++
		return Table{Preset: t.Preset, Name: ns}, t.Preset == PresetShedlock, nil
	}}
	if got, ns, err := PlaceNamespace(nil, Table{Preset: PresetShedlock}, "prod"); err != nil || ns != "prod" || got.Name != "" {
		t.Errorf("no entry: %+v %q %v", got, ns, err)
	}
	if got, ns, err := PlaceNamespace(&Dialect{}, Table{Preset: PresetShedlock}, "prod"); err != nil || ns != "prod" || got.Name != "" {
		t.Errorf("entry without NamespaceTable: %+v %q %v", got, ns, err)
	}
	if got, ns, err := PlaceNamespace(d, Table{Preset: PresetShedlock}, "prod"); err != nil || ns != "" || got.Name != "prod" {
		t.Errorf("placed: %+v %q %v", got, ns, err)
	}
	if got, ns, err := PlaceNamespace(d, Table{}, "prod"); err != nil || ns != "prod" || got != (Table{}) {
		t.Errorf("not placed: %+v %q %v", got, ns, err)
	}
	before := asked
	if _, _, err := PlaceNamespace(d, Table{Preset: PresetShedlock}, "a:b"); !errors.Is(err, ErrInvalid) || asked != before {
		t.Errorf("a:b: %v (asked %d times), want ErrInvalid without asking", err, asked-before)
	}
}
