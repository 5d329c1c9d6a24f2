package cmd

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/schedlock/schedlock/dialects/redis/shedlocksim"
)

// redisKeys is every key of c matching pattern.
func redisKeys(t *testing.T, c *goredis.Client, pattern string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []string
	iter := c.Scan(ctx, 0, pattern, 1000).Iterator()
	for iter.Next(ctx) {
		out = append(out, iter.Val())
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// redisTestClient is a client of the live Redis whose keys matching
// "*token*" are deleted when the test ends.
func redisTestClient(t *testing.T, dsn, token string) *goredis.Client {
	t.Helper()
	opts, err := goredis.ParseURL(dsn)
	if err != nil {
		t.Fatal(err)
	}
	c := goredis.NewClient(opts)
	t.Cleanup(func() {
		for _, k := range redisKeys(t, c, "*"+token+"*") {
			c.Del(context.Background(), k)
		}
		_ = c.Close()
	})
	return c
}

// withDSNQuery adds query to the DSN raw.
func withDSNQuery(raw, query string) string {
	u, _ := url.Parse(raw)
	if u.RawQuery != "" {
		query = u.RawQuery + "&" + query
	}
	u.RawQuery = query
	return u.String()
}

var shedlockValueRE = regexp.MustCompile(`^ADDED:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z@.+$`)

// listedLocksJSON runs locks ls -o json with args and returns what it
// lists, "namespace|name|state|key|source" each, sorted.
func listedLocksJSON(t *testing.T, args ...string) []string {
	t.Helper()
	r := runCmd(t, false, nil, append([]string{"locks", "ls", "-o", "json", "--all"}, args...)...)
	if r.err != nil {
		t.Fatalf("locks ls %q: %v\n%s", args, r.err, r.stderr)
	}
	var listed []struct {
		Name, Namespace, Key *string
		State, Source        string
	}
	if err := json.Unmarshal([]byte(r.stdout), &listed); err != nil {
		t.Fatalf("locks ls %q: %v\n%s", args, err, r.stdout)
	}
	var out []string
	for _, l := range listed {
		out = append(out, strings.Join([]string{str(l.Namespace), str(l.Name), l.State, str(l.Key), l.Source}, "|"))
	}
	sort.Strings(out)
	return out
}

// On the shedlock preset --namespace ENV (and x-namespace=ENV) is
// ShedLock's environment: run, pause, unlock and locks ls work on
// job-lock:ENV:NAME — the key a ShedLock node built with
// .environment("ENV") takes (shedlocksim) — never on the name ENV::NAME of
// the default environment; the node and schedlock exclude each other;
// locks ls lists exactly that environment's keys, and the default
// environment without a namespace, where --name 'ENV::*' finds keys of the
// earlier form.
func TestRedisShedlockNamespaceIsTheEnvironment(t *testing.T) {
	dsn := liveRedis(t)
	token := strconv.FormatInt(time.Now().UnixNano(), 36)
	env := "env-" + token
	c := redisTestClient(t, dsn, token)
	ctx := context.Background()
	node := shedlocksim.Node{Client: c, Environment: env}
	defaultEnv := shedlocksim.Node{Client: c}
	otherEnv := shedlocksim.Node{Client: c, Environment: "other-" + token}
	shed := []string{"--dsn", dsn, "--preset", "shedlock", "--namespace", env}

	// run holds nightly in env: the node's key, nothing in "default".
	dir := t.TempDir()
	started, stop := filepath.Join(dir, "started"), filepath.Join(dir, "stop")
	done := make(chan result, 1)
	go func() {
		done <- runCmd(t, false, nil, append(append([]string{"run"}, shed...), "--name", "nightly", "--at-most", "1m", "--",
			"sh", "-c", "touch "+started+"; while [ ! -e "+stop+" ]; do sleep 0.05; done")...)
	}()
	waitStarted(t, started, done)
	if v, err := c.Get(ctx, node.Key("nightly")).Result(); err != nil || !shedlockValueRE.MatchString(v) {
		t.Fatalf("%s: %q %v, want ShedLock's value", node.Key("nightly"), v, err)
	}
	if keys := redisKeys(t, c, "job-lock:default:*"+token+"*"); len(keys) != 0 {
		t.Errorf("keys in the default environment: %q", keys)
	}
	if _, ok, err := node.Lock(ctx, "nightly", time.Minute); err != nil || ok {
		t.Fatalf("the ShedLock node of %s took the lock run holds: %v %v", env, ok, err)
	}

	// locks ls: exactly env's keys; the default environment without a
	// namespace; keys of the earlier form by --name 'ENV::*'.
	mustLock := func(n shedlocksim.Node, name string) shedlocksim.Lock {
		t.Helper()
		l, ok, err := n.Lock(ctx, name, time.Minute)
		if err != nil || !ok {
			t.Fatalf("%s: %v %v", n.Key(name), ok, err)
		}
		return l
	}
	mustLock(node, "weekly")
	mustLock(otherEnv, "nightly")
	mustLock(defaultEnv, env+"::nightly") // what --namespace wrote before
	want := []string{
		env + "|nightly|held|job-lock:" + env + ":nightly|" + env,
		env + "|weekly|held|job-lock:" + env + ":weekly|" + env,
	}
	if got := listedLocksJSON(t, shed...); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("locks ls %s:\n%s\nwant\n%s", strings.Join(shed, " "), strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := listedLocksJSON(t, "--dsn", withDSNQuery(dsn, "x-preset=shedlock&x-namespace="+env)); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("locks ls with x-namespace:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	oldForm := []string{"default|" + env + "::nightly|held|job-lock:default:" + env + "::nightly|default"}
	if got := listedLocksJSON(t, "--dsn", dsn, "--preset", "shedlock", "--name", env+"::*"); strings.Join(got, "\n") != strings.Join(oldForm, "\n") {
		t.Errorf("locks ls --preset shedlock --name '%s::*':\n%s\nwant\n%s", env, strings.Join(got, "\n"), strings.Join(oldForm, "\n"))
	}
	for _, l := range listedLocksJSON(t, "--dsn", dsn, "--preset", "shedlock") {
		if strings.Contains(l, "job-lock:"+env+":") || strings.Contains(l, "job-lock:other-") {
			t.Errorf("locks ls --preset shedlock lists a key of another environment: %s", l)
		}
	}
	// Without a preset, the namespace selects env's keys too.
	if got := listedLocksJSON(t, "--dsn", dsn, "--namespace", env); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("locks ls --namespace %s:\n%s\nwant\n%s", env, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// unlock frees the node's lock in env, by the preset or without one.
	r := runCmd(t, false, nil, append(append([]string{"unlock", "weekly"}, shed...), "--force", "--yes")...)
	if r.err != nil {
		t.Fatalf("unlock weekly: %v", r.err)
	}
	mustLock(node, "monthly")
	r = runCmd(t, false, nil, "unlock", "monthly", "--dsn", dsn, "--namespace", env, "--force", "--yes")
	if r.err != nil {
		t.Fatalf("unlock monthly without a preset: %v", r.err)
	}
	for _, k := range []string{node.Key("weekly"), node.Key("monthly")} {
		if n, err := c.Exists(ctx, k).Result(); err != nil || n != 0 {
			t.Errorf("%s after unlock --force: %d %v, want gone", k, n, err)
		}
	}
	if n, err := c.Exists(ctx, defaultEnv.Key(env+"::nightly"), otherEnv.Key("nightly")).Result(); err != nil || n != 2 {
		t.Errorf("other environments' keys: %d of 2 left (%v)", n, err)
	}

	// run ends: its key goes, and the node takes the lock.
	if err := os.WriteFile(stop, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-done:
		if res.err != nil {
			t.Fatalf("run: %v\n%s", res.err, res.stderr)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("run did not end")
	}
	held := mustLock(node, "nightly")

	// The node holds: run with the namespace skips its command.
	ran := filepath.Join(dir, "ran")
	r = runCmd(t, false, nil, append(append([]string{"run"}, shed...), "--name", "nightly", "--", "touch", ran)...)
	host, _ := os.Hostname()
	if _, err := os.Stat(ran); err == nil || ExitCode(r.err) != 0 || r.err == nil || !strings.Contains(r.err.Error(), `"nightly" is held by `+host+":") {
		t.Errorf("run while the node holds nightly: exit %d (%v), ran: %v; want skipped, naming the node", ExitCode(r.err), r.err, err == nil)
	}
	if err := node.Unlock(ctx, held, 0); err != nil {
		t.Fatal(err)
	}

	// x-namespace in the DSN: run's at-least keeps env's key after it.
	r = runCmd(t, false, nil, "run", "--dsn", withDSNQuery(dsn, "x-preset=shedlock&x-namespace="+env), "--name", "nightly", "--at-least", "1m", "--", "true")
	if r.err != nil {
		t.Fatalf("run with x-namespace: %v", r.err)
	}
	if ttl, err := c.PTTL(ctx, node.Key("nightly")).Result(); err != nil || ttl <= 0 || ttl > time.Minute {
		t.Fatalf("%s after run --at-least 1m: PTTL %v %v", node.Key("nightly"), ttl, err)
	}
	if _, ok, err := node.Lock(ctx, "nightly", time.Minute); err != nil || ok {
		t.Fatalf("the node took nightly within run's at-least: %v %v", ok, err)
	}

	// pause --create keeps the pause on env's key; resume frees it.
	r = runCmd(t, false, nil, append(append([]string{"pause", "daily"}, shed...), "--for", "1h", "--create", "--yes")...)
	if r.err != nil || !strings.Contains(r.stdout, "in table "+env+".") {
		t.Fatalf("pause: %v\n%s", r.err, r.stdout)
	}
	if _, ok, err := node.Lock(ctx, "daily", time.Minute); err != nil || ok {
		t.Fatalf("the node took a paused lock: %v %v", ok, err)
	}
	r = runCmd(t, false, nil, append(append([]string{"resume", "daily"}, shed...), "--yes")...)
	if r.err != nil {
		t.Fatalf("resume: %v\n%s", r.err, r.stdout)
	}
	if n, err := c.Exists(ctx, node.Key("daily")).Result(); err != nil || n != 0 {
		t.Errorf("%s after resume: %d %v, want gone", node.Key("daily"), n, err)
	}
}

// An environment schedlock does not name — holding ':' or a control
// character, the preset's own table name — and two environments at once
// (--table or x-table, and --namespace or x-namespace, differing) are
// refused in one line, exit 2, with nothing written.
func TestRedisShedlockEnvironmentRefusedWritesNothing(t *testing.T) {
	dsn := liveRedis(t)
	token := strconv.FormatInt(time.Now().UnixNano(), 36)
	c := redisTestClient(t, dsn, token)
	name := "job-" + token
	for _, tc := range []struct {
		what string
		args []string
		want string
	}{
		{"a colon", []string{"--dsn", dsn, "--preset", "shedlock", "--namespace", "a:" + token}, `holds ":"`},
		{"a colon in the DSN", []string{"--dsn", withDSNQuery(dsn, "x-preset=shedlock&x-namespace=a%3A"+token)}, `holds ":"`},
		{"a control character", []string{"--dsn", dsn, "--preset", "shedlock", "--namespace", "a\x01" + token}, "control character"},
		{"a C1 control character", []string{"--dsn", dsn, "--preset", "shedlock", "--namespace", "a\u0085" + token}, "control character"},
		{"the preset's table name", []string{"--dsn", dsn, "--preset", "shedlock", "--namespace", "shedlock"}, `"shedlock" cannot be named`},
		{"two environments", []string{"--dsn", dsn, "--preset", "shedlock", "--table", "t_" + token, "--namespace", "n-" + token}, "both name ShedLock's environment"},
		{"two environments in the DSN", []string{"--dsn", withDSNQuery(dsn, "x-preset=shedlock&x-table=t_"+token+"&x-namespace=n-"+token)}, "both name ShedLock's environment"},
		{"the DSN's table and --namespace", []string{"--dsn", withDSNQuery(dsn, "x-preset=shedlock&x-table=t_"+token), "--namespace", "n-" + token}, "both name ShedLock's environment"},
	} {
		t.Run(tc.what, func(t *testing.T) {
			refusedStoreRun(t, tc.want, append(tc.args, "--name", name)...)
			for _, cmd := range [][]string{
				{"locks", "ls"},
				{"unlock", name, "--force", "--yes"},
				{"pause", name, "--for", "1h", "--create", "--yes"},
			} {
				r := runCmd(t, false, nil, append(cmd, tc.args...)...)
				if code := ExitCode(r.err); code != CodeUsage || !strings.Contains(r.err.Error(), tc.want) || strings.Contains(r.err.Error(), "\n") {
					t.Errorf("%s: exit %d (%v), want %d in one line saying %q", cmd[0], code, r.err, CodeUsage, tc.want)
				}
			}
			if keys := redisKeys(t, c, "*"+token+"*"); len(keys) != 0 {
				t.Errorf("keys written: %q", keys)
			}
		})
	}
}
