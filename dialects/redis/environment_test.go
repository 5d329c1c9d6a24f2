package redis

import (
	"errors"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

// On the shedlock preset a namespace becomes the environment — the table
// — with no namespace left for the names; a table naming another
// environment is refused, the preset's own table name and the same
// environment are not; the native layout keeps namespaces in names.
func TestNamespaceTable(t *testing.T) {
	shed := func(name string) dialects.Table {
		return dialects.Table{Preset: dialects.PresetShedlock, Name: name, TimeZone: "UTC"}
	}
	for _, tc := range []struct {
		t      dialects.Table
		ns     string
		want   dialects.Table
		placed bool
		err    string
	}{
		{t: shed(""), ns: "prod", want: shed("prod"), placed: true},
		{t: shed("shedlock"), ns: "prod", want: shed("prod"), placed: true},
		{t: shed("prod"), ns: "prod", want: shed("prod"), placed: true},
		{t: shed(""), ns: "eu-prod.1", want: shed("eu-prod.1"), placed: true},
		{t: shed(""), ns: "default", want: shed("default"), placed: true},
		{t: shed("staging"), ns: "prod", err: `table "staging" and namespace "prod" both name ShedLock's environment`},
		{t: shed("default"), ns: "prod", err: `table "default" and namespace "prod" both name`},
		{t: shed(""), ns: "shedlock", err: `ShedLock environment "shedlock" cannot be named`},
		{t: shed(""), ns: "a\x01b", err: "holds a control character"},
		{t: shed(""), ns: "a\u0085b", err: "holds a control character"},
		{t: shed(""), ns: "a:b", err: "holds ':'"},
		{t: dialects.Table{}, ns: "prod", want: dialects.Table{}},
		{t: dialects.Table{Preset: dialects.PresetSchedlock, Name: "jobs"}, ns: "prod", want: dialects.Table{Preset: dialects.PresetSchedlock, Name: "jobs"}},
	} {
		got, placed, err := namespaceTable(tc.t, tc.ns)
		switch {
		case tc.err != "":
			if err == nil || !errors.Is(err, dialects.ErrInvalid) || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%+v %q: error %v, want one line matching ErrInvalid saying %q", tc.t, tc.ns, err, tc.err)
			}
		case err != nil || placed != tc.placed || got != tc.want:
			t.Errorf("%+v %q: %+v %v %v, want %+v %v", tc.t, tc.ns, got, placed, err, tc.want, tc.placed)
		}
	}
}

// PlaceNamespace through the registry entry: the shedlock table takes the
// namespace (none left for names), a bad namespace is refused as such
// first, and no namespace changes nothing.
func TestPlaceNamespaceOnRedis(t *testing.T) {
	d, ok := dialects.Lookup(Name)
	if !ok {
		t.Fatal("redis is not registered")
	}
	shed := dialects.Table{Preset: dialects.PresetShedlock}
	if got, ns, err := dialects.PlaceNamespace(d, shed, "prod"); err != nil || ns != "" || got.Name != "prod" {
		t.Errorf("shedlock, prod: %+v %q %v", got, ns, err)
	}
	if got, ns, err := dialects.PlaceNamespace(d, dialects.Table{}, "prod"); err != nil || ns != "prod" || got != (dialects.Table{}) {
		t.Errorf("native, prod: %+v %q %v", got, ns, err)
	}
	if got, ns, err := dialects.PlaceNamespace(d, shed, ""); err != nil || ns != "" || got != shed {
		t.Errorf("shedlock, no namespace: %+v %q %v", got, ns, err)
	}
	if _, _, err := dialects.PlaceNamespace(d, shed, "job*"); !errors.Is(err, dialects.ErrInvalid) || !strings.Contains(err.Error(), "glob") {
		t.Errorf("shedlock, job*: %v, want the namespace rules' refusal", err)
	}
}

// The layout of an environment that is no identifier (a namespace), and
// environments a key cannot carry unambiguously refused.
func TestShedlockLayoutEnvironment(t *testing.T) {
	l, err := newLayout(dialects.Table{Preset: dialects.PresetShedlock, Name: "eu-prod"})
	if err != nil || l.key("nightly") != "job-lock:eu-prod:nightly" || l.schema.Table != "eu-prod" || l.match() != "job-lock:eu-prod:*" {
		t.Fatalf("eu-prod: %+v %v", l, err)
	}
	for _, name := range []string{"", "shedlock"} {
		if l, err := newLayout(dialects.Table{Preset: dialects.PresetShedlock, Name: name}); err != nil || l.key("n") != "job-lock:default:n" {
			t.Errorf("%q: %+v %v, want the default environment", name, l, err)
		}
	}
	for _, env := range []string{"a:b", "a\tb", "\x7f", "  ", "\xff"} {
		if _, err := newLayout(dialects.Table{Preset: dialects.PresetShedlock, Name: env}); !errors.Is(err, dialects.ErrInvalid) {
			t.Errorf("%q: %v, want ErrInvalid", env, err)
		}
	}
}

// A listing of every environment reads a key's environment up to its
// first ':', and leaves out the environment "shedlock", which no table
// names (it stands for "default"), so no unlock acts on another key.
func TestLayoutOfShedlockKey(t *testing.T) {
	base := layout{schema: dialects.Schema{Preset: dialects.PresetShedlock}}
	for key, want := range map[string]string{
		"job-lock:prod:nightly":     "prod|nightly",
		"job-lock:a:b:nightly":      "a|b:nightly",
		"job-lock:default:p::x":     "default|p::x",
		"job-lock:shedlock:nightly": "",
		"job-lock::nightly":         "",
		"job-lock:prod:":            "",
	} {
		l, ok := layoutOfKey(base, key)
		got := ""
		if ok {
			name, _, _ := l.nameOf(key)
			got = l.prefix + "|" + name
			if l.key(name) != key {
				t.Errorf("%s: read as %s, whose key is %s", key, got, l.key(name))
			}
		}
		if got != want {
			t.Errorf("%s: %q, want %q", key, got, want)
		}
	}
}
