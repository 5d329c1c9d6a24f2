#!/usr/bin/env bash
# Builds bin/schedlock: static (CGO_ENABLED=0), reproducible paths
# (-trimpath), no symbol table or DWARF (-s -w), version, commit and date
# stamped into internal/buildinfo. The date is the commit's, so the same
# commit builds the same binary. .goreleaser.yaml builds with the same
# flags (packaging_test.go compares them).
#   VERSION=v1.2.3 scripts/build.sh      # default: git describe, else "dev"
#   OUT=/tmp/s KEEP_SYMBOLS=1 scripts/build.sh   # elsewhere, without -s -w
#                                                # (scripts/size.sh reads its symbols)
#   TAGS=no_etcd scripts/build.sh        # more build tags (dialects/all)
# -tags grpcnotrace leaves out gRPC's request tracing (golang.org/x/net/trace,
# an HTTP debug page nothing here serves): its html/template would make the
# linker keep every exported method of every linked type (docs/install.md).
# -modfile=build/oracharsets/go.mod builds with go-ora's character set
# tables compressed, 12 MB smaller and the same converters (written just
# before by scripts/oracharsets/main.go; docs/install.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

pkg=github.com/schedlock/schedlock/internal/buildinfo
version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
commit=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
date=${DATE:-$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null || echo unknown)}
out=${OUT:-bin/schedlock}
strip="-s -w"
if [[ ${KEEP_SYMBOLS:-} == 1 ]]; then
	strip=""
fi

mkdir -p "$(dirname "$out")"
go run scripts/oracharsets/main.go -out build/oracharsets
CGO_ENABLED=0 go build -trimpath -modfile=build/oracharsets/go.mod -tags "grpcnotrace${TAGS:+,$TAGS}" \
	-ldflags "$strip -X $pkg.Version=$version -X $pkg.Commit=$commit -X $pkg.Date=$date" \
	-o "$out" .
echo "built $out $version ($commit, $date)"
