package cmd

import (
	"bufio"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// grpcCalls reads the gRPC calls (and streams) the etcd member at addr
// started so far, by method, from its metrics.
func grpcCalls(t *testing.T, addr string) map[string]int {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	calls := map[string]int{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "grpc_server_started_total{")
		if !ok {
			continue
		}
		labels, value, _ := strings.Cut(rest, "} ")
		n, err := strconv.ParseFloat(value, 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", sc.Text(), err)
		}
		method := labels
		if _, m, ok := strings.Cut(labels, `grpc_method="`); ok {
			method, _, _ = strings.Cut(m, `"`)
		}
		calls[method] += int(n)
	}
	if len(calls) == 0 {
		t.Fatalf("no grpc_server_started_total in the metrics of %s (%v)", addr, sc.Err())
	}
	return calls
}

// `schedlock run -- true` on etcd makes at most 4 calls: Status
// (detection), LeaseGrant and Txn (the acquire), LeaseRevoke (the
// release, which deletes the key with its lease). Counted from the
// metrics of a member of the test's own, which nothing else uses.
func TestEtcdRunMakesAtMostFourCalls(t *testing.T) {
	etcdLive(t)
	m := startEtcdMember(t)
	before := grpcCalls(t, m.client)
	r := runCmd(t, false, nil, "run", "--dsn", m.dsn(), "--name", "count", "--", "true")
	if r.err != nil {
		t.Fatalf("run: %v\n%s", r.err, r.stderr)
	}
	after := grpcCalls(t, m.client)
	total, made := 0, []string{}
	for method, n := range after {
		if d := n - before[method]; d > 0 {
			total += d
			made = append(made, method+"×"+strconv.Itoa(d))
		}
	}
	if total > 4 || after["Txn"]-before["Txn"] != 1 {
		t.Errorf("run made %d calls (%v), want at most 4 with one Txn", total, made)
	}
}
