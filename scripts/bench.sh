#!/usr/bin/env bash
# Runs the lock benchmarks of the live dialects (PostgreSQL, MariaDB,
# SQLite) against throwaway servers started as test.sh starts them (or the
# servers named by SCHEDLOCK_TEST_POSTGRES_DSN / SCHEDLOCK_TEST_MYSQL_DSN)
# and prints them.
#   scripts/bench.sh                 # every benchmark, 1s each
#   BENCHTIME=5s scripts/bench.sh    # longer runs
#   BENCH=Acquire scripts/bench.sh   # only benchmarks matching a pattern
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/services.sh
source scripts/services.sh

ensure_go
start_services postgres mysql

go test -run '^$' -bench "${BENCH:-.}" -benchtime "${BENCHTIME:-1s}" -benchmem -count=1 \
	./dialects/postgres/ ./dialects/mysql/ ./dialects/sqlite/
