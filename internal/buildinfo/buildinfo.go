// Package buildinfo holds the version stamped into the binary at link time:
//
//	go build -ldflags "-X github.com/schedlock/schedlock/internal/buildinfo.Version=v1.2.3 \
//	  -X github.com/schedlock/schedlock/internal/buildinfo.Commit=abc1234 \
//	  -X github.com/schedlock/schedlock/internal/buildinfo.Date=2025-01-02T03:04:05Z"
//
// scripts/build.sh and .goreleaser.yaml set all three. Without -X the
// version is the module's own as the toolchain recorded it (so `go install
// github.com/schedlock/schedlock@v1.2.3` reports v1.2.3), else "dev", and
// Commit and Date come from the VCS stamp when there is one.
package buildinfo

import (
	"runtime"
	"runtime/debug"
	"time"
)

// Set at link time with -X; see the package comment.
var (
	Version = "dev"
	Commit  = ""
	Date    = ""
)

// develVersion is the default Version: nothing was stamped with -X.
const develVersion = "dev"

// Info is the version report of `schedlock version`.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Date      string `json:"date"`
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"`
}

// Get returns the version of the running binary: the -X values, completed
// from the toolchain's build information (module version, VCS revision and
// time). Unknown values are "unknown"; a Date that parses as RFC 3339 is
// written in UTC with milliseconds, like every time schedlock prints.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return resolve(Version, Commit, Date, bi)
}

// resolve is Get with its inputs given; bi may be nil.
func resolve(version, commit, date string, bi *debug.BuildInfo) Info {
	info := Info{Version: version, Commit: commit, Date: date, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi != nil {
		if (info.Version == "" || info.Version == develVersion) && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && info.Commit == "":
				info.Commit = s.Value
			case s.Key == "vcs.time" && info.Date == "":
				info.Date = s.Value
			}
		}
	}
	if info.Version == "" {
		info.Version = develVersion
	}
	if info.Commit == "" {
		info.Commit = "unknown"
	}
	if t, err := time.Parse(time.RFC3339Nano, info.Date); err == nil {
		info.Date = t.UTC().Format(dateLayout)
	}
	if info.Date == "" {
		info.Date = "unknown"
	}
	return info
}

// dateLayout is output.TimeLayout (not imported: buildinfo has no
// dependencies): RFC 3339 in UTC with exactly three fractional digits.
const dateLayout = "2006-01-02T15:04:05.000Z07:00"
