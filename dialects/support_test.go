package dialects

import (
	"testing"
)

func TestSupportRowsAreChecked(t *testing.T) {
	for name, d := range map[string]*Dialect{
		"no product":    {Name: "zz-test-a", Support: []ProductSupport{{Name: "P"}}},
		"no name":       {Name: "zz-test-b", Support: []ProductSupport{{Product: "p"}}},
		"other dialect": {Name: "zz-test-c", Support: []ProductSupport{{Dialect: "x", Product: "p", Name: "P"}}},
		"repeated":      {Name: "zz-test-d", Support: []ProductSupport{{Product: "p", Name: "P"}, {Product: "p", Name: "Q"}}},
	} {
		if err := checkSupport(d); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	d := &Dialect{Name: "zz-test-e", Support: []ProductSupport{{Product: "p", Name: "P"}, {Product: "p", Variant: "v", Name: "PV"}}}
	if err := checkSupport(d); err != nil || d.Support[0].Dialect != "zz-test-e" {
		t.Errorf("checkSupport = %v, rows %+v; want the dialect filled in", err, d.Support)
	}
}
