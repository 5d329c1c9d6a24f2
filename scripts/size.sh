#!/usr/bin/env bash
# What the release binary is made of (docs/install.md):
#   scripts/size.sh              # bin/schedlock's size, its modules, bytes per module
#   scripts/size.sh --backends   # also what each backend adds: one more build per
#                                # backend, with its no_<backend> tag (dialects/all)
# Builds bin/schedlock with scripts/build.sh, and the same build with its
# symbol table in a temporary directory, which scripts/size/main.go reads.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

backends=false
case "${1:-}" in
"") ;;
--backends) backends=true ;;
*)
	echo "usage: scripts/size.sh [--backends]" >&2
	exit 2
	;;
esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
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
	for b in postgres mysql sqlserver oracle redis etcd zookeeper; do
		OUT="$tmp/no_$b" TAGS="no_$b" bash scripts/build.sh >/dev/null
		awk -v b="$b" -v full="$full" -v without="$(stat -c %s "$tmp/no_$b")" \
			'BEGIN { printf "| %s | %.1f |\n", b, (full - without) / 1e6 }'
	done
	echo
	echo "SQLite stays in every build: selfcheck without a DSN runs on it."
fi
