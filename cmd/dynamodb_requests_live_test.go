package cmd

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/schedlock/schedlock/internal/livetest"
)

// `schedlock run -- true` on DynamoDB sends 3 requests: DescribeTable of
// the DSN's table (detection, and the check of its key schema), and the
// acquire and the release, one conditional UpdateItem each. Counted on the
// wire by an HTTP proxy in front of the server, by the X-Amz-Target each
// request names.
func TestDynamoDBRunSendsThreeRequests(t *testing.T) {
	live := livetest.DSN(t, livetest.DynamoDB)
	endpoint := regexp.MustCompile(`endpoint=([^&]+)`).FindStringSubmatch(live)
	if endpoint == nil {
		t.Fatalf("no endpoint in %s", live)
	}
	target, err := url.Parse(endpoint[1])
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var calls []string
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls = append(calls, strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810."))
		mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	table := dynamoTable(t, live, "count_")
	dropDynamoTable(t, dynamoBackend(t, live), table)
	dsn := strings.Replace(strings.Replace(live, endpoint[1], srv.URL, 1), "?", "/"+table+"?", 1)

	if r := runCmd(t, false, nil, "run", "--dsn", dsn, "--name", "count", "--", "true"); r.err != nil {
		t.Fatalf("run: %v\n%s", r.err, r.stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	updates := 0
	for _, c := range calls {
		if c == "UpdateItem" {
			updates++
		}
	}
	sorted := append([]string(nil), calls...)
	sort.Strings(sorted)
	if len(calls) != 3 || updates != 2 {
		t.Errorf("run sent %d requests %v, want 3: DescribeTable and 2 UpdateItem (acquire and release)", len(calls), sorted)
	}
	t.Logf("run -- true: %d requests %v", len(calls), calls)
}
