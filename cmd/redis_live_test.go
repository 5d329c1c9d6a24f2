package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/schedlock/schedlock/internal/livetest"
	"github.com/schedlock/schedlock/internal/testnet"
)

// liveRedis is the throwaway Redis of the tests, or a skip without one.
func liveRedis(t *testing.T) string {
	t.Helper()
	raw := livetest.DSN(t, livetest.Redis)
	return raw
}

// extraRedis starts a redis-server of the test's own on a free loopback
// port with args, stopped when the test ends, and returns its address.
func extraRedis(t *testing.T, args ...string) string {
	addr, _ := restartableRedis(t, args...)
	return addr
}

// restartableRedis is extraRedis with a restart: the server is killed
// (SIGKILL, no save) and started again on the same port, with no data.
func restartableRedis(t *testing.T, args ...string) (addr string, restart func()) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("this test needs redis-server: %v", err)
	}
	addr = testnet.FreeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	dir := t.TempDir()
	var cmd *exec.Cmd
	stop := func() {
		if cmd != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}
	start := func() {
		cmd = exec.Command(bin, append([]string{"--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir}, args...)...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			c, err := net.Dial("tcp", addr)
			if err == nil {
				_ = c.Close()
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("redis-server on %s did not start: %v", addr, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	t.Cleanup(stop)
	start()
	return addr, func() { stop(); start() }
}

// Redis restarted without persistence while run holds a lock: run finds
// out at its next refresh (a third of --at-most) and stops its child.
func TestRedisRestartStopsRun(t *testing.T) {
	liveRedis(t)
	addr, restart := restartableRedis(t)
	started := filepath.Join(t.TempDir(), "started")
	done := make(chan result, 1)
	go func() {
		done <- runCmd(t, false, nil, "run", "--dsn", "redis://"+addr+"/0", "--name", "nightly", "--at-most", "3s", "--kill-grace", "500ms", "--", "sh", "-c", "touch "+started+"; sleep 30")
	}()
	waitStarted(t, started, done)
	restart()
	select {
	case res := <-done:
		if ExitCode(res.err) == 0 || !strings.Contains(res.err.Error()+res.stderr, "lost") {
			t.Errorf("run after the restart: %v\n%s\nwant the lock reported lost", res.err, res.stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run did not stop its child after Redis forgot the lock")
	}
}

// Every command on a live Redis (a throwaway one, without persistence):
// selfcheck passes with the Redis probes once --allow-risk accepts the
// missing persistence, detect names the mode and the risks, run holds the
// lock while locks ls shows it with its key and token, unlock's owner
// guard refuses and --force frees it, and bench measures the engine
// beside the raw commands.
func TestRedisLiveCommands(t *testing.T) {
	dsn := liveRedis(t)
	r := runCmd(t, false, nil, "selfcheck", "--dsn", dsn, "-o", "json", "--allow-risk", "no-persistence")
	if r.err != nil {
		t.Fatalf("selfcheck: %v\n%s", r.err, r.stdout)
	}
	if st := checkStatuses(t, r.stdout); st["probe.risks"] != "pass" || st["probe.two-holders"] != "warn" {
		t.Errorf("selfcheck: probe.risks %q, probe.two-holders %q; want passed, and a warning of the accepted risk", st["probe.risks"], st["probe.two-holders"])
	}

	r = runCmd(t, false, nil, "detect", "--dsn", dsn, "-o", "json")
	if r.err != nil {
		t.Fatal(r.err)
	}
	var det struct {
		Dialect, Mode string
		Risks         []struct{ ID, Detail, Remedy string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &det); err != nil {
		t.Fatal(err)
	}
	if det.Dialect != "redis" || det.Mode != "standalone" || len(det.Risks) == 0 {
		t.Errorf("detect: %+v, want redis, standalone and the risks of a throwaway server", det)
	}

	name := "cmd-redis-" + fmt.Sprint(time.Now().UnixNano())
	defer func() {
		opts, _ := goredis.ParseURL(dsn)
		c := goredis.NewClient(opts)
		defer c.Close()
		_ = c.Del(context.Background(), "schedlock:{"+name+"}", "schedlock:{"+name+"}:token").Err()
	}()
	checkRunListedAndForced(t, dsn, name, func(l listedLock) bool { return l.Key == "schedlock:{"+name+"}" })
	if rep := benchBesideRaw(t, dsn, "commands"); rep.RoundTrip != nil && rep.RoundTrip.Statement != "PING" {
		t.Errorf("bench: round trip %+v, want PING", rep.RoundTrip)
	}
}

// checkStatuses reads a selfcheck JSON report: the status of each check.
func checkStatuses(t *testing.T, report string) map[string]string {
	t.Helper()
	var rep struct {
		Checks []struct{ ID, Status string }
	}
	if err := json.Unmarshal([]byte(report), &rep); err != nil {
		t.Fatalf("no JSON report (%v):\n%s", err, report)
	}
	out := map[string]string{}
	for _, c := range rep.Checks {
		out[c.ID] = c.Status
	}
	return out
}

// A Redis without persistence can hand a lock to two holders:
// selfcheck fails on it (exit 3, probe.two-holders failed with the
// remedy and how to accept it) unless --allow-risk no-persistence accepts
// it; accepting another risk does not. run warns in one line on stderr
// and runs; -q silences the warning.
func TestRedisRiskOfTwoHolders(t *testing.T) {
	dsn := liveRedis(t)
	for _, allow := range [][]string{nil, {"--allow-risk", "async-replication"}} {
		r := runCmd(t, false, nil, append([]string{"selfcheck", "--dsn", dsn, "-o", "json", "--check", "detect", "--check", "probe.two-holders"}, allow...)...)
		if code := ExitCode(r.err); code != CodeNegative {
			t.Fatalf("selfcheck %v: exit %d (%v), want %d\n%s", allow, code, r.err, CodeNegative, r.stdout)
		}
		var rep struct {
			Checks []struct{ ID, Status, Detail, Remedy string }
		}
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatal(err)
		}
		for _, c := range rep.Checks {
			if c.ID == "probe.two-holders" && (c.Status != "fail" || !strings.Contains(c.Detail, "no-persistence: persistence is off") ||
				!strings.Contains(c.Remedy, "appendonly yes") || !strings.Contains(c.Remedy, "accept it with --allow-risk no-persistence")) {
				t.Errorf("selfcheck %v: %+v, want failed on no-persistence with the remedy and --allow-risk", allow, c)
			}
		}
	}
	r := runCmd(t, false, nil, "selfcheck", "--dsn", dsn, "--check", "probe.two-holders", "--allow-risk", "no-persistence,async-replication")
	if r.err != nil {
		t.Fatalf("selfcheck with the risk accepted: %v\n%s", r.err, r.stdout)
	}

	name := "cmd-risk-" + fmt.Sprint(time.Now().UnixNano())
	defer func() {
		opts, _ := goredis.ParseURL(dsn)
		c := goredis.NewClient(opts)
		defer c.Close()
		_ = c.Del(context.Background(), "schedlock:{"+name+"}:token").Err()
	}()
	ran := filepath.Join(t.TempDir(), "ran")
	r = runCmd(t, false, nil, "run", "--dsn", dsn, "--name", name, "--", "touch", ran)
	if r.err != nil {
		t.Fatalf("run: %v\n%s", r.err, r.stderr)
	}
	if _, err := os.Stat(ran); err != nil {
		t.Error("run did not run its command")
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "schedlock: warning: risk no-persistence can hand the lock to two holders: ") ||
		!strings.Contains(lines[0], "remedy: turn on appendonly yes") {
		t.Errorf("run's stderr %q: want one warning line naming no-persistence and its remedy", r.stderr)
	}
	r = runCmd(t, false, nil, "run", "-q", "--dsn", dsn, "--name", name, "--", "true")
	if r.err != nil || r.stderr != "" {
		t.Errorf("run -q: %v, stderr %q; want it silent", r.err, r.stderr)
	}
}

// waitStarted waits for run's child to create path, for at most 30
// seconds; a run that ends first fails the test.
func waitStarted(t *testing.T, path string, done <-chan result) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		select {
		case r := <-done:
			t.Fatalf("run ended before its child started: %v\n%s", r.err, r.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Bad Redis input: one line, the documented exit code, no password shown,
// and nothing taken.
func TestRedisBadInput(t *testing.T) {
	live := liveRedis(t)
	lu, err := url.Parse(live)
	if err != nil {
		t.Fatal(err)
	}
	esc := url.QueryEscape(secret)
	authed := extraRedis(t, "--requirepass", "right-password")
	replica := extraRedis(t, "--replicaof", lu.Hostname(), lu.Port())
	evicting := extraRedis(t, "--maxmemory", "10mb", "--maxmemory-policy", "allkeys-lru")
	cases := []struct {
		name, dsn, want string
		code            int
	}{
		{"unreachable", "redis://:" + esc + "@" + testnet.FreeAddr(t) + "/0", "cannot connect to redis", CodeError},
		{"auth refused", "redis://:" + esc + "@" + authed + "/0", "WRONGPASS", CodeError},
		{"no password", "redis://" + authed + "/0", "requires a password", CodeError},
		// A password that is a word of the hint leaves the hint readable.
		{"auth refused, a password the hint has as a word", "redis://:wrong@" + authed + "/0", "the user or password in the URL is wrong,", CodeError},
		{"read-only replica", "redis://:" + esc + "@" + replica + "/0", "read-only replica", CodeError},
		{"evicting store", "redis://" + evicting + "/0", "maxmemory-policy", CodeUsage},
		{"bad database", "redis://" + lu.Host + "/notanumber", "invalid database number", CodeUsage},
		{"database out of range", "redis://" + lu.Host + "/99", "no database of the URL's number", CodeError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ran := filepath.Join(t.TempDir(), "ran")
			r := runCmd(t, false, nil, "run", "--dsn", tc.dsn, "--name", "bad-input", "--", "touch", ran)
			assertRunHidden(t, r)
			if code := ExitCode(r.err); code != tc.code {
				t.Fatalf("exit %d (%v), want %d", code, r.err, tc.code)
			}
			if msg := r.err.Error(); !strings.Contains(msg, tc.want) || strings.Contains(strings.TrimSpace(msg), "\n") {
				t.Errorf("error %q: want one line containing %q", msg, tc.want)
			}
			if _, err := os.Stat(ran); err == nil {
				t.Error("the command ran")
			}
		})
	}
	t.Run("selfcheck on the evicting store", func(t *testing.T) {
		// A report, not a bare error: the probes, and the check that
		// says no strategy is possible and why.
		r := runCmd(t, false, nil, "selfcheck", "--dsn", "redis://"+evicting+"/0", "-o", "json")
		if code := ExitCode(r.err); code != CodeNegative {
			t.Fatalf("exit %d (%v), want %d\n%s", code, r.err, CodeNegative, r.stdout)
		}
		var rep struct {
			Checks []struct{ ID, Status, Detail, Remedy string }
		}
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("no JSON report (%v):\n%s", err, r.stdout)
		}
		got := map[string]string{}
		for _, c := range rep.Checks {
			got[c.ID] = c.Status
			if c.ID == "strategy" && (!strings.Contains(c.Detail, "maxmemory-policy") || c.Remedy == "") {
				t.Errorf("strategy check %+v: want the eviction named and a remedy", c)
			}
		}
		if got["detect"] != "pass" || got["probe.two-holders"] != "fail" || got["strategy"] != "fail" {
			t.Errorf("checks %v: want detect passed, probe.two-holders and strategy failed", got)
		}
	})
	c := goredis.NewClient(&goredis.Options{Addr: evicting})
	defer c.Close()
	if n, err := c.DBSize(context.Background()).Result(); err != nil || n != 0 {
		t.Errorf("the evicting store holds %d keys (%v), want none", n, err)
	}
}

// TestRedisPauseShedlockPreset pauses and resumes a lock in ShedLock's
// Redis layout: each step names the env the key lives under and says
// what the lock is now, also when resume leaves no key.
func TestRedisPauseShedlockPreset(t *testing.T) {
	dsn := liveRedis(t)
	name := "pause-preset-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	r := runCmd(t, false, nil, "pause", name, "--dsn", dsn, "--preset", "shedlock", "--for", "1h", "--create", "--yes")
	if r.err != nil || !strings.Contains(r.stdout, "in table default.") || !strings.Contains(r.stdout, "now: paused") {
		t.Fatalf("pause: %v\n%s", r.err, r.stdout)
	}
	r = runCmd(t, false, nil, "resume", name, "--dsn", dsn, "--preset", "shedlock", "--yes")
	if r.err != nil || !strings.Contains(r.stdout, "in table default.") || !strings.Contains(r.stdout, "now: free, no row left") {
		t.Fatalf("resume: %v\n%s", r.err, r.stdout)
	}
	r = runCmd(t, false, nil, "run", "--dsn", dsn, "--preset", "shedlock", "--name", name, "--", "true")
	if r.err != nil {
		t.Errorf("run after resume: %v", r.err)
	}
}

// Redis ACL users short of what the locks need — the scripting commands,
// or the lock keys outside their key patterns: run says what is missing
// and how to grant it (exit 1, nothing taken), and detect reports it as a
// missing privilege instead of failing or finding nothing.
func TestRedisUserShortOfPrivileges(t *testing.T) {
	liveRedis(t)
	addr := extraRedis(t,
		"--user", "noscript", "on", ">pw", "~*", "&*", "+@all", "-@scripting",
		"--user", "keyed", "on", ">pw", "~app:*", "&*", "+@all")
	for _, tc := range []struct{ user, privilege, grant string }{
		{"noscript", "EVALSHA", "ACL SETUSER noscript +@scripting"},
		{"keyed", "the lock keys", "ACL SETUSER keyed ~schedlock:*"},
	} {
		t.Run(tc.user, func(t *testing.T) {
			dsn := "redis://" + tc.user + ":pw@" + addr + "/0"
			runRefused(t, dsn, "missing privilege", tc.privilege, tc.grant)
			missing := detectMissingPrivileges(t, dsn)
			if len(missing) != 1 || !strings.Contains(missing[0].Privilege, tc.privilege) ||
				!strings.Contains(missing[0].Grant, tc.grant) {
				t.Errorf("detect: missing privileges %+v, want %s with %q", missing, tc.privilege, tc.grant)
			}
			// Listing reads each lock key with a script: not proved.
			if l := detectCapability(t, dsn, "lock_listing"); l.Status == "yes" || !strings.Contains(l.Remedy, tc.grant) {
				t.Errorf("detect: lock_listing %+v, want it not proved, with %q", l, tc.grant)
			}
		})
	}
}
