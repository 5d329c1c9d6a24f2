package dialects

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckNameAndOwner(t *testing.T) {
	bad := []struct{ what, value, says string }{
		{"empty", "", "is empty"},
		{"NUL inside", "x\x00y", "contains a NUL byte"},
		{"NUL at the end", "x\x00", "contains a NUL byte"},
		{"invalid UTF-8", "x\xff", "is not valid UTF-8"},
		{"cut multi-byte character", "\xe6\x97", "is not valid UTF-8"},
		{"spaces", "   ", "is only white space"},
		{"tabs and newlines", "\t\r\n", "is only white space"},
		{"Unicode spaces", "\u00a0\u2003\u3000", "is only white space"},
		{"huge with a NUL", strings.Repeat("n", 200_000) + "\x00", "contains a NUL byte"},
	}
	for _, c := range bad {
		for what, check := range map[string]func(string) error{"name": CheckName, "owner": CheckOwner} {
			err := check(c.value)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.says) {
				t.Errorf("%s %s: %v; want ErrInvalid saying %q", what, c.what, err, c.says)
				continue
			}
			if len(err.Error()) > 120 {
				t.Errorf("%s %s: %d-byte message quotes the value: %.200q", what, c.what, len(err.Error()), err)
			}
		}
	}
	for _, good := range []string{"a", " a ", "nightly-report", "日本語 ключ 🔒", "a\tb", strings.Repeat("n", 1000)} {
		if err := CheckName(good); err != nil {
			t.Errorf("CheckName(%.40q): %v", good, err)
		}
	}
	if err := CheckOwner(strings.Repeat("o", MaxOwnerBytes+1)); !errors.Is(err, ErrInvalid) {
		t.Errorf("owner of %d bytes: %v", MaxOwnerBytes+1, err)
	}
	if err := CheckOwner("web-3:4711:9f1c2a7b"); err != nil {
		t.Errorf("a generated owner: %v", err)
	}
}

func TestNormalizeChecksTheOwner(t *testing.T) {
	for _, owner := range []string{"o\x00", "o\xff", " \t"} {
		if _, err := (Options{Owner: owner}).Normalize(); !errors.Is(err, ErrInvalid) {
			t.Errorf("Normalize with owner %q: %v", owner, err)
		}
	}
	o, err := Options{}.Normalize()
	if err != nil || CheckOwner(o.Owner) != nil {
		t.Errorf("Normalize without an owner: %+v %v", o, err)
	}
}

func TestHeldErrorQuotesLongNamesShort(t *testing.T) {
	msg := (&HeldError{Name: strings.Repeat("x", 131072), Holder: strings.Repeat("h", 255)}).Error()
	if len(msg) > 300 || !strings.Contains(msg, "…") {
		t.Errorf("HeldError of a 128 KB name is %d bytes: %.300q", len(msg), msg)
	}
}
