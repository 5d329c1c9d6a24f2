#!/usr/bin/env bash
# Builds the peers `schedlock bench --peers` runs beside schedlock, from the
# module of their own under bench/peers, so that none of them is linked into
# bin/schedlock:
#   bin/schedlock-peer-river   River (riverqueue/river, riverpgxv5) for
#                              `bench --claims --peers` on PostgreSQL
#   OUT=/usr/local/bin scripts/peers.sh    # elsewhere (beside schedlock or on PATH)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
out=${OUT:-bin}
mkdir -p "$out"
out=$(cd "$out" && pwd)
CGO_ENABLED=0 go build -C bench/peers -trimpath -o "$out/schedlock-peer-river" ./river
echo "peers.sh: $out/schedlock-peer-river"
