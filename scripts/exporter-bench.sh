#!/usr/bin/env bash
# Measures one scrape of `schedlock exporter` over 1,000 held locks on
# PostgreSQL: /metrics fetched N times (default 50) with --cache 1ms, so
# that every scrape reads the database again; prints the median and the
# 90th percentile of the whole scrape (curl's time_total) and of the
# database read alone (schedlock_scrape_duration_seconds). The issue's
# target is under 100 ms. Not a test: speed is measured, never asserted.
#
#   scripts/exporter-bench.sh [DSN]     (default $SCHEDLOCK_TEST_POSTGRES_DSN)
#   SCRAPES=200 LOCKS=5000 scripts/exporter-bench.sh postgres://…
#
# Needs psql and curl; builds bin/schedlock when missing. The locks live in
# a table of their own (exporter_bench), dropped at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
dsn=${1:-${SCHEDLOCK_TEST_POSTGRES_DSN:-}}
[[ -n $dsn ]] || { echo "usage: $0 POSTGRES_DSN (or set SCHEDLOCK_TEST_POSTGRES_DSN)" >&2; exit 2; }
locks=${LOCKS:-1000}
scrapes=${SCRAPES:-50}
bin=${SCHEDLOCK_BIN:-bin/schedlock}
[[ -x $bin ]] || bash scripts/build.sh >/dev/null
table=exporter_bench
sep='?'
[[ $dsn == *\?* ]] && sep='&'

# psql takes the URL without schedlock's x- options.
psql_dsn=$(sed -E 's/[?&]x-[a-z-]+=[^&]*//g' <<<"$dsn")
sql() { psql "$psql_dsn" -v ON_ERROR_STOP=1 -qAtc "$1"; }

exporter_pid=
cleanup() {
	[[ -n $exporter_pid ]] && kill "$exporter_pid" 2>/dev/null && wait "$exporter_pid" 2>/dev/null
	sql "DROP TABLE IF EXISTS $table; DROP TABLE IF EXISTS ${table}_runs" || true
}
trap cleanup EXIT

"$bin" run --dsn "$dsn${sep}x-table=$table" --strategy table --create-table --name bench-seed -- true
sql "INSERT INTO $table (name, lock_until, locked_at, locked_by, token)
     SELECT 'bench-' || g, (now() AT TIME ZONE 'UTC') + interval '1 hour', now() AT TIME ZONE 'UTC', 'bench-host:' || g || ':0', g
     FROM generate_series(1, $locks) g"
held=$(sql "SELECT count(*) FROM $table WHERE lock_until > now() AT TIME ZONE 'UTC'")

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$bin" exporter --dsn "$dsn${sep}x-table=$table" --cache 1ms --max-holders $((locks + 10)) \
	--web.listen-address "127.0.0.1:$port" -q &
exporter_pid=$!
for _ in $(seq 100); do curl -fs -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.1; done
curl -fs -o /dev/null "http://127.0.0.1:$port/metrics" # connect and find the table once

totals=() reads=()
for _ in $(seq "$scrapes"); do
	out=$(curl -fs -w '\n%{time_total}\n' "http://127.0.0.1:$port/metrics")
	totals+=("$(tail -n 1 <<<"$out")")
	reads+=("$(grep '^schedlock_scrape_duration_seconds' <<<"$out" | awk '{print $2}')")
done
series=$(grep -c '^schedlock_' <<<"$out")
body=$(grep -v '^#' <<<"$out" | wc -c)

# pct P VALUES…: the P-th percentile (nearest rank), in milliseconds.
pct() {
	local p=$1
	shift
	printf '%s\n' "$@" | sort -g | awk -v p="$p" '{v[NR]=$1} END {i=int((p/100)*NR+0.999); if (i<1) i=1; printf "%.1f", v[i]*1000}'
}
echo "exporter-bench: $held held locks on $(sql 'SHOW server_version') ($table), $scrapes scrapes, $series schedlock_ series, $body bytes"
echo "exporter-bench: whole scrape (curl time_total): median $(pct 50 "${totals[@]}") ms, p90 $(pct 90 "${totals[@]}") ms"
echo "exporter-bench: database read (schedlock_scrape_duration_seconds): median $(pct 50 "${reads[@]}") ms, p90 $(pct 90 "${reads[@]}") ms"
echo "exporter-bench: load $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
