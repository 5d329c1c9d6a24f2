package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestResolve(t *testing.T) {
	stamped := &debug.BuildInfo{
		Main: debug.Module{Path: "github.com/schedlock/schedlock", Version: "v1.4.0"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123abcd"},
			{Key: "vcs.time", Value: "2025-03-04T05:06:07Z"},
		},
	}
	for _, tc := range []struct {
		name                  string
		version, commit, date string
		bi                    *debug.BuildInfo
		want                  Info
	}{
		{"go install @v1.4.0", "dev", "", "", stamped, Info{Version: "v1.4.0", Commit: "0123abcd", Date: "2025-03-04T05:06:07.000Z"}},
		{"ldflags win", "v2.0.0", "beef", "2025-01-02T03:04:05+01:00", stamped, Info{Version: "v2.0.0", Commit: "beef", Date: "2025-01-02T02:04:05.000Z"}},
		{"go build in a checkout", "dev", "", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, Info{Version: "dev", Commit: "unknown", Date: "unknown"}},
		{"no build info", "", "", "", nil, Info{Version: "dev", Commit: "unknown", Date: "unknown"}},
		{"unparsable date kept", "v1.0.0", "c", "yesterday", nil, Info{Version: "v1.0.0", Commit: "c", Date: "yesterday"}},
	} {
		got := resolve(tc.version, tc.commit, tc.date, tc.bi)
		got.GoVersion, got.Platform = "", ""
		if got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
