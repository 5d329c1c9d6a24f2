package locktable

import (
	"testing"
	"time"
)

func TestTruthy(t *testing.T) {
	cases := []struct {
		in   any
		want bool
	}{
		{nil, false}, {true, true}, {false, false},
		{int64(1), true}, {int64(0), false}, {float64(1), true},
		{[]byte{1}, true}, {[]byte{0}, false}, // MySQL BIT(1)
		{[]byte("1"), true}, {[]byte("0"), false}, // MySQL TINYINT(1), text protocol
		{"true", true}, {"FALSE", false}, {"t", true}, {"f", false},
	}
	for _, tc := range cases {
		got, err := truthy(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("truthy(%#v) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []any{"maybe", []byte("2x"), struct{}{}} {
		if _, err := truthy(bad); err == nil {
			t.Errorf("truthy(%#v) accepted", bad)
		}
	}
}

func TestReadTime(t *testing.T) {
	want := time.Date(2024, 5, 1, 10, 0, 0, 123000000, time.UTC)
	cases := []any{
		want.UnixMilli(),
		float64(want.UnixMilli()),
		want.In(time.FixedZone("CEST", 2*3600)),
		"2024-05-01 10:00:00.123",
		[]byte("2024-05-01T10:00:00.123"),
		"2024-05-01 12:00:00.123+02:00",
		"2024-05-01T10:00:00.123Z",
		"1714557600123",
	}
	for _, in := range cases {
		got, err := readTime(in)
		if err != nil || !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("readTime(%#v) = %v, %v; want %v in UTC", in, got, err, want)
		}
	}
	if got, err := readTime(nil); err != nil || !got.IsZero() {
		t.Errorf("readTime(nil) = %v, %v", got, err)
	}
	if _, err := readTime("yesterday"); err == nil {
		t.Error(`readTime("yesterday") accepted`)
	}
}
