#!/usr/bin/env bash
# Builds bin/schedlock: static (CGO_ENABLED=0), reproducible paths
# (-trimpath), version, commit and date stamped into internal/buildinfo.
# The date is the commit's, so the same commit builds the same binary.
#   VERSION=v1.2.3 scripts/build.sh      # default: git describe, else "dev"
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

pkg=github.com/schedlock/schedlock/internal/buildinfo
version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
commit=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
date=${DATE:-$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null || echo unknown)}

mkdir -p bin
CGO_ENABLED=0 go build -trimpath \
	-ldflags "-s -w -X $pkg.Version=$version -X $pkg.Commit=$commit -X $pkg.Date=$date" \
	-o bin/schedlock .
echo "built bin/schedlock $version ($commit, $date)"
