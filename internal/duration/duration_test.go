package duration

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// The grammar of java.time.Duration.parse (the examples of its Javadoc
// first), Go's form, and what both refuse.
func TestParse(t *testing.T) {
	ok := []struct {
		in   string
		want time.Duration
	}{
		// java.time.Duration.parse's Javadoc examples.
		{"PT20.345S", 20*time.Second + 345*time.Millisecond},
		{"PT15M", 15 * time.Minute},
		{"PT10H", 10 * time.Hour},
		{"P2D", 48 * time.Hour},
		{"P2DT3H4M", 51*time.Hour + 4*time.Minute},
		{"PT-6H3M", -6*time.Hour + 3*time.Minute},
		{"-PT6H3M", -(6*time.Hour + 3*time.Minute)},
		{"-PT-6H+3M", 6*time.Hour - 3*time.Minute},
		// ShedLock's usual values.
		{"PT30M", 30 * time.Minute},
		{"PT30S", 30 * time.Second},
		{"PT1H30M", 90 * time.Minute},
		{"P1D", 24 * time.Hour},
		{"P1DT12H", 36 * time.Hour},
		// Case, comma, fraction forms, signs.
		{"pt30m", 30 * time.Minute},
		{"p1dt1h", 25 * time.Hour},
		{"PT1,5S", 1500 * time.Millisecond},
		{"PT1.S", time.Second},
		{"PT0.000000001S", time.Nanosecond},
		{"PT1.123456789S", time.Second + 123456789},
		{"PT-0.5S", -500 * time.Millisecond},
		{"-PT-0.5S", 500 * time.Millisecond},
		{"+PT+1M", time.Minute},
		{"PT0S", 0},
		{"P0D", 0},
		{"PT90M", 90 * time.Minute},
		{"PT3600S", time.Hour},
		// time.Duration's limits.
		{"PT2562047H47M16.854775807S", math.MaxInt64},
		{"-PT2562047H47M16.854775807S", -math.MaxInt64},
		{"P106751D", 106751 * 24 * time.Hour},
		// Go's form.
		{"90s", 90 * time.Second},
		{"1h30m", 90 * time.Minute},
		{"500ms", 500 * time.Millisecond},
		{"-5s", -5 * time.Second},
		{"0", 0},
		{"1.5h", 90 * time.Minute},
	}
	for _, tc := range ok {
		got, err := Parse(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	bad := []struct {
		in       string
		calendar bool
	}{
		{"P1M", true},
		{"P1W", true},
		{"P1Y", true},
		{"P1Y2M3D", true},
		{"P1D1M", true},
		{"p2w", true},
		{"-P1M", true},
		{"P1MT1H", true},
		{"P", false},
		{"PT", false},
		{"P1DT", false},
		{"pt", false},
		{"PT1D", false},
		{"PT.5S", false},
		{"P1.5D", false},
		{"PT1.5H", false},
		{"PT1.1234567891S", false},
		{"PT1H1H", false},
		{"PT1S1M", false},
		{"P 1D", false},
		{"PT1H ", false},
		{"P٣D", false},
		{"PT2562047H47M16.854775808S", false},
		{"P106752D", false},
		{"P99999999999999999999D", false},
		{"30", false},
		{"30 s", false},
		{"", false},
		{"T1H", false},
	}
	for _, tc := range bad {
		got, err := Parse(tc.in)
		switch {
		case err == nil:
			t.Errorf("Parse(%q) = %v, want an error", tc.in, got)
		case errors.Is(err, ErrCalendar) != tc.calendar:
			t.Errorf("Parse(%q): %v; calendar error %v, want %v", tc.in, err, errors.Is(err, ErrCalendar), tc.calendar)
		case strings.Contains(err.Error(), "\n"):
			t.Errorf("Parse(%q): error spans lines: %q", tc.in, err)
		case !strings.Contains(err.Error(), "PT90S") && !tc.calendar && !strings.Contains(err.Error(), "out of range"):
			t.Errorf("Parse(%q): error %q does not say what a duration looks like", tc.in, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"PT30M", "P1D", "-PT-6H+3M", "PT1.5S", "90s", "P1M"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := Parse(s)
		if err != nil || !isISO(s) {
			return
		}
		// An ISO duration read back from its seconds is the same.
		again, err := ParseISO(isoOf(d))
		if err != nil || again != d {
			t.Fatalf("Parse(%q) = %v; its ISO form %q reads back as %v, %v", s, d, isoOf(d), again, err)
		}
	})
}

// isoOf writes d as PTnS with its nanoseconds.
func isoOf(d time.Duration) string {
	sign := ""
	if d < 0 {
		sign = "-"
	}
	u := uint64(d)
	if d < 0 {
		u = uint64(-(d + 1)) + 1
	}
	return sign + "PT" + uitoa(u/1e9) + "." + pad9(u%1e9) + "S"
}

func uitoa(u uint64) string {
	if u == 0 {
		return "0"
	}
	var b []byte
	for ; u > 0; u /= 10 {
		b = append([]byte{byte('0' + u%10)}, b...)
	}
	return string(b)
}

func pad9(u uint64) string {
	s := uitoa(u)
	return strings.Repeat("0", 9-len(s)) + s
}
