#!/usr/bin/env bash
# The one test command (README and .ci/run call it):
#   1. throwaway PostgreSQL, MariaDB, Redis, etcd, ZooKeeper and NATS servers
#      and FerretDB (MongoDB's protocol; built once from its Go module into
#      ~/.cache/schedlock) and dynalite (DynamoDB's API, npm, cached there
#      too) and the Kubernetes test API server (test/kubeapiserver:
#      k8s.io/apiserver serving Leases over that etcd, built once into
#      ~/.cache/schedlock) started in a temporary directory on free loopback ports
#      (binaries installed from Debian packages when missing), their DSNs
#      exported,
#      all of them stopped and removed when this script exits; the
#      machine's own servers are never used or changed (scripts/services.sh);
#   2. promtool check rules and test rules on deploy/monitoring (Debian's
#      prometheus package installed when missing, chromium too for the
#      status page's browser test), go vet ./... and go test -race ./...
#      (live tests included);
#   3. bin/schedlock built and `schedlock selfcheck` run with no DSN, as in
#      the README's quick start;
#   4. one closing line: "test.sh: N passed, N failed, N skipped".
# Runs as root on a fresh Debian 12 machine.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/services.sh
source scripts/services.sh

ensure_go
start_services postgres mysql redis etcd zookeeper nats mongodb dynamodb kubernetes

# The monitoring tests need Prometheus (promtool, and a real server for the
# live alert test) and headless Chromium for the status page.
command -v promtool >/dev/null && command -v prometheus >/dev/null || apt_install prometheus
command -v chromium >/dev/null || apt_install chromium
log "promtool check rules and test rules (deploy/monitoring)"
promtool check rules deploy/monitoring/schedlock-rules.yml
(cd deploy/monitoring && promtool test rules schedlock-rules.test.yml)

log "go vet ./..."
go vet ./...

# Four packages at a time on any machine: most live tests wait on their
# servers rather than compute, so two (go test's default on two cores)
# left a core idle for half of the run.
log "go test -race -count=1 -p 4 ./..."
out=$(mktemp)
at_exit 'rm -f "$out"'
status=0
go test -race -count=1 -p 4 -timeout 20m -v ./... >"$out" 2>&1 || status=$?

# Package results and top-level skips; every failure with its output.
grep -E '^(ok |FAIL|\?|--- SKIP|panic:)' "$out" || true
if [[ $status != 0 ]]; then
	echo "---- failures ----"
	grep -E -B12 -A30 -- '--- FAIL|^panic:|^FAIL\s' "$out" | head -n 600 || true
	grep -E '\[build failed\]|^#|cannot|undefined' "$out" | head -n 50 || true
fi
passed=$(grep -cE '^\s*--- PASS' "$out" || true)
failed=$(grep -cE '^\s*--- FAIL' "$out" || true)
skipped=$(grep -cE '^\s*--- SKIP' "$out" || true)
if [[ $status != 0 && $failed == 0 ]]; then
	failed=1 # a build failure or a panic fails no named test
fi
if [[ $status != 0 ]]; then
	echo "test.sh: $passed passed, $failed failed, $skipped skipped"
	exit 1
fi

log "quick start: scripts/build.sh && ./bin/schedlock selfcheck"
bash scripts/build.sh
selfcheck_status=0
env -u SCHEDLOCK_DSN -u DATABASE_URL ./bin/schedlock selfcheck || selfcheck_status=$?
if [[ $selfcheck_status != 0 ]]; then
	log "error: ./bin/schedlock selfcheck exited $selfcheck_status"
	echo "test.sh: $passed passed, $((failed + 1)) failed, $skipped skipped"
	exit 1
fi

echo "test.sh: $passed passed, $failed failed, $skipped skipped"
