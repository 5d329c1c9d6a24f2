package sqlkit

import (
	"reflect"
	"testing"
)

func TestLiteralNames(t *testing.T) {
	got := literalNames([]string{"nightly", "report-*", "a?c", "[ab]x", `esc\*`, "plain.name"})
	if want := []string{"nightly", "plain.name"}; !reflect.DeepEqual(got, want) {
		t.Errorf("literalNames = %v, want %v", got, want)
	}
	if got := dedupe([]string{"a", "", "b", "a"}); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("dedupe = %v", got)
	}
}
