package dialects_test

import (
	"errors"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

func TestLoadTimeZone(t *testing.T) {
	for _, name := range []string{"", "UTC"} {
		if loc, err := dialects.LoadTimeZone(name); loc != nil || err != nil {
			t.Errorf("LoadTimeZone(%q) = %v, %v; want nil (UTC)", name, loc, err)
		}
	}
	if loc, err := dialects.LoadTimeZone("Local"); loc != time.Local || err != nil {
		t.Errorf("LoadTimeZone(Local) = %v, %v", loc, err)
	}
	if loc, err := dialects.LoadTimeZone("Europe/Berlin"); err != nil || loc.String() != "Europe/Berlin" {
		t.Errorf("LoadTimeZone(Europe/Berlin) = %v, %v", loc, err)
	}
	for _, bad := range []string{"Mars/Olympus", "../etc/passwd", "Europe/Berlin'", "+01:00", "europe berlin"} {
		if _, err := dialects.LoadTimeZone(bad); !errors.Is(err, dialects.ErrInvalid) {
			t.Errorf("LoadTimeZone(%q) = %v, want ErrInvalid", bad, err)
		}
	}
	if _, err := (dialects.Table{Preset: dialects.PresetShedlock, TimeZone: "Nowhere/Land"}).Schema(); !errors.Is(err, dialects.ErrInvalid) {
		t.Errorf("Schema with an unknown zone: %v, want ErrInvalid", err)
	}
	s, err := dialects.Table{TimeZone: "UTC"}.Schema()
	if err != nil || s.TimeZone != "" {
		t.Errorf("Schema in UTC = %+v, %v; want the zero zone", s, err)
	}
}

func TestFrameAt(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	// Ten days before New York's clocks go back (2026-11-01 06:00 UTC).
	f := dialects.FrameAt(ny, time.Date(2026, 10, 22, 12, 0, 0, 0, time.UTC))
	want := dialects.ZoneFrame{SwitchUnixMs: time.Date(2026, 11, 1, 6, 0, 0, 0, time.UTC).UnixMilli(), Before: -4 * time.Hour, After: -5 * time.Hour}
	if f != want {
		t.Errorf("frame before the fall change = %+v, want %+v", f, want)
	}
	// Ten days after it, the frame still holds that change.
	if g := dialects.FrameAt(ny, time.Date(2026, 11, 11, 12, 0, 0, 0, time.UTC)); g != want {
		t.Errorf("frame after the fall change = %+v, want %+v", g, want)
	}
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	if g := dialects.FrameAt(tokyo, time.Now()); !g.Fixed() || g.After != 9*time.Hour {
		t.Errorf("Tokyo frame = %+v, want a fixed +9h", g)
	}
	if g := dialects.FrameAt(nil, time.Now()); g != (dialects.ZoneFrame{}) {
		t.Errorf("UTC frame = %+v", g)
	}
}

func TestWallToUTC(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	wall := func(h, m int, day int) time.Time { return time.Date(2026, 11, day, h, m, 0, 0, time.UTC) }
	cases := []struct {
		name string
		wall time.Time
		want time.Time
	}{
		{"summer time", wall(0, 30, 1), time.Date(2026, 11, 1, 4, 30, 0, 0, time.UTC)},
		{"repeated hour reads as the later instant", wall(1, 30, 1), time.Date(2026, 11, 1, 6, 30, 0, 0, time.UTC)},
		{"standard time", wall(2, 30, 1), time.Date(2026, 11, 1, 7, 30, 0, 0, time.UTC)},
		{"skipped hour uses the offset before the change", time.Date(2026, 3, 8, 2, 30, 0, 0, time.UTC), time.Date(2026, 3, 8, 7, 30, 0, 0, time.UTC)},
	}
	for _, c := range cases {
		if got := dialects.WallToUTC(c.wall, ny); !got.Equal(c.want) {
			t.Errorf("%s: WallToUTC(%s) = %s, want %s", c.name, c.wall.Format(time.DateTime), got, c.want)
		}
	}
	at := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	if got := dialects.UTCToWall(at, ny); got != time.Date(2026, 7, 1, 8, 0, 0, 0, time.UTC) {
		t.Errorf("UTCToWall = %s", got)
	}
	if got := dialects.WallToUTC(dialects.UTCToWall(at, ny), ny); !got.Equal(at) {
		t.Errorf("round trip = %s, want %s", got, at)
	}
}
