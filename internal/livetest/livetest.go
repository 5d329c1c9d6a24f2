// Package livetest gives a live test the DSN of its server: the value of
// one of the SCHEDLOCK_TEST_*_DSN variables below, or a skip that names
// the variable when it is unset. With the variable set the test runs, so
// a server that does not answer fails it rather than skipping it.
//
// scripts/test.sh sets all but Oracle, SQLServer, Kingbase and Dameng to
// throwaway servers it starts; those four name servers not run here (see
// README.md, Tests).
package livetest

import (
	"os"
	"testing"
)

// The variables that name the live test servers.
const (
	Postgres  = "SCHEDLOCK_TEST_POSTGRES_DSN"
	MySQL     = "SCHEDLOCK_TEST_MYSQL_DSN"
	Redis     = "SCHEDLOCK_TEST_REDIS_DSN"
	Etcd      = "SCHEDLOCK_TEST_ETCD_DSN"
	ZooKeeper = "SCHEDLOCK_TEST_ZK_DSN"
	Oracle    = "SCHEDLOCK_TEST_ORACLE_DSN"
	SQLServer = "SCHEDLOCK_TEST_SQLSERVER_DSN"
	Kingbase  = "SCHEDLOCK_TEST_KINGBASE_DSN"
	Dameng    = "SCHEDLOCK_TEST_DAMENG_DSN"
	NATS      = "SCHEDLOCK_TEST_NATS_DSN"
	MongoDB   = "SCHEDLOCK_TEST_MONGODB_DSN"
	DynamoDB  = "SCHEDLOCK_TEST_DYNAMODB_DSN"
	// Kubernetes names the test API server of test/kubeapiserver (or a
	// cluster): k8s://NAMESPACE?kubeconfig=FILE.
	Kubernetes = "SCHEDLOCK_TEST_KUBERNETES_DSN"
)

// known are the variables DSN accepts.
var known = map[string]bool{Postgres: true, MySQL: true, Redis: true, Etcd: true, ZooKeeper: true,
	Oracle: true, SQLServer: true, Kingbase: true, Dameng: true, NATS: true, MongoDB: true, DynamoDB: true, Kubernetes: true}

// DSN returns the value of env, one of the variables above, and skips tb
// ("SCHEDLOCK_TEST_…_DSN is not set") when it is unset or empty. Another
// name fails tb: a misspelt variable must not skip a test for good.
func DSN(tb testing.TB, env string) string {
	tb.Helper()
	if !known[env] {
		tb.Fatalf("livetest: %q is not a live test DSN variable", env)
	}
	dsn := os.Getenv(env)
	if dsn == "" {
		tb.Skip(env + " is not set")
	}
	return dsn
}
