// Package buildinfo holds the version stamped into the binary at link time:
//
//	go build -ldflags "-X github.com/schedlock/schedlock/internal/buildinfo.Version=v1.2.3 \
//	  -X github.com/schedlock/schedlock/internal/buildinfo.Commit=abc1234 \
//	  -X github.com/schedlock/schedlock/internal/buildinfo.Date=2025-01-02T03:04:05Z"
//
// scripts/build.sh and .goreleaser.yaml set all three. A plain `go build`
// leaves Version "dev" and takes Commit and Date from the module's VCS stamp
// when the toolchain recorded one.
package buildinfo

import (
	"runtime"
	"runtime/debug"
)

// Set at link time with -X; see the package comment.
var (
	Version = "dev"
	Commit  = ""
	Date    = ""
)

// Info is the version report of `schedlock version`.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Date      string `json:"date"`
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"`
}

// Get returns the stamped version, filling Commit and Date from the VCS
// stamp when -X did not set them; unknown values are "unknown".
func Get() Info {
	info := Info{Version: Version, Commit: Commit, Date: Date, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && info.Commit == "":
				info.Commit = s.Value
			case s.Key == "vcs.time" && info.Date == "":
				info.Date = s.Value
			}
		}
	}
	if info.Commit == "" {
		info.Commit = "unknown"
	}
	if info.Date == "" {
		info.Date = "unknown"
	}
	return info
}
