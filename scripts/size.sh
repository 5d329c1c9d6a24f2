#!/usr/bin/env bash
# What the release binary is made of (docs/install.md):
#   scripts/size.sh              # bin/schedlock's size, its modules, bytes per module
#   scripts/size.sh --backends   # also what each backend adds: one more build per
#                                # backend, with its no_<backend> tag (dialects/all)
#   scripts/size.sh --library    # instead, the library program scripts/libsize/main.go
#                                # (lock and dialects/postgres): its modules and its
#                                # size with CGO_ENABLED=0 -ldflags '-s -w'
# Builds bin/schedlock with scripts/build.sh, and the same build with its
# symbol table in a temporary directory, which scripts/size/main.go reads.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

backends=false
library=false
case "${1:-}" in
"") ;;
--backends) backends=true ;;
--library) library=true ;;
*)
	echo "usage: scripts/size.sh [--backends | --library]" >&2
	exit 2
	;;
esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if $library; then
	# lock/link_test.go holds the module count to its bound.
	prog=scripts/libsize/main.go
	go list -deps -f '{{with .Module}}{{.Path}}{{end}}' "$prog" | sort -u >"$tmp/modules"
	CGO_ENABLED=0 go build -ldflags '-s -w' -o "$tmp/libsize" "$prog"
	echo "## $prog: lock and dialects/postgres"
	echo
	echo "modules (go list -deps, schedlock's own included): $(wc -l <"$tmp/modules")"
	echo
	sed 's/^/    /' "$tmp/modules"
	echo
	awk -v b="$(stat -c %s "$tmp/libsize")" 'BEGIN { printf "size (CGO_ENABLED=0, -ldflags \x27-s -w\x27): %.1f MB (%d bytes)\n", b / 1e6, b }'
	exit 0
fi
bash scripts/build.sh >/dev/null
OUT="$tmp/schedlock" KEEP_SYMBOLS=1 bash scripts/build.sh >/dev/null

echo "## go version -m bin/schedlock"
echo
go version -m bin/schedlock | sed 's/^/    /'
echo
echo "## size"
echo
go run scripts/size/main.go -stripped bin/schedlock -symbols "$tmp/schedlock" -packages 25

if $backends; then
	full=$(stat -c %s bin/schedlock)
	echo
	echo "What each backend adds (the release build against the same build with -tags no_<backend>):"
	echo
	echo "| backend | MB |"
	echo "| --- | ---: |"
	for b in postgres mysql sqlserver oracle redis etcd zookeeper nats mongodb dynamodb kubernetes; do
		OUT="$tmp/no_$b" TAGS="no_$b" bash scripts/build.sh >/dev/null
		awk -v b="$b" -v full="$full" -v without="$(stat -c %s "$tmp/no_$b")" \
			'BEGIN { printf "| %s | %.1f |\n", b, (full - without) / 1e6 }'
	done
	echo
	echo "SQLite stays in every build: selfcheck without a DSN runs on it."
fi
