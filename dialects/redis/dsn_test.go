package redis

import (
	"errors"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

func TestParseDSNForms(t *testing.T) {
	for _, tc := range []struct {
		dsn, mode string
		addrs     []string
		db        int
	}{
		{"redis://127.0.0.1:6379/2", ModeStandalone, []string{"127.0.0.1:6379"}, 2},
		{"redis://cache", ModeStandalone, []string{"cache:6379"}, 0},
		{"rediss://:pw@cache:6380/1", ModeStandalone, []string{"cache:6380"}, 1},
		{"redis://h1:7000,h2:7001,h3", ModeCluster, []string{"h1:7000", "h2:7001", "h3:6379"}, 0},
		{"redis://h1:7000?addr=h2:7001", ModeCluster, []string{"h1:7000", "h2:7001"}, 0},
		{"redis://:pw@s1:26379,s2:26379/3?master=jobs", ModeSentinel, []string{"s1:26379", "s2:26379"}, 3},
		{"redis://s1:26379?master_name=jobs", ModeSentinel, []string{"s1:26379"}, 0},
	} {
		c, err := parseDSN(tc.dsn)
		if err != nil {
			t.Errorf("%s: %v", tc.dsn, err)
			continue
		}
		var addrs []string
		db := 0
		switch {
		case c.single != nil:
			addrs, db = []string{c.single.Addr}, c.single.DB
			if strings.HasPrefix(tc.dsn, "rediss") != (c.single.TLSConfig != nil) {
				t.Errorf("%s: TLS %v", tc.dsn, c.single.TLSConfig != nil)
			}
		case c.cluster != nil:
			addrs = c.cluster.Addrs
		case c.failover != nil:
			addrs, db = c.failover.SentinelAddrs, c.failover.DB
			if c.failover.MasterName != "jobs" || c.failover.Password != c.failover.SentinelPassword {
				t.Errorf("%s: master %q, passwords differ", tc.dsn, c.failover.MasterName)
			}
		}
		if c.mode != tc.mode || strings.Join(addrs, ",") != strings.Join(tc.addrs, ",") || db != tc.db {
			t.Errorf("%s: mode %s addrs %v db %d, want %s %v %d", tc.dsn, c.mode, addrs, db, tc.mode, tc.addrs, tc.db)
		}
	}
	for _, bad := range []string{"redis://h/x", "redis://h1,,h2", "redis://h1,h2/3", "redis://h?bogus_option=1", "memcached://h"} {
		_, err := parseDSN(bad)
		if !errors.Is(err, dialects.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", bad, err)
		}
	}
	// An empty master name would quietly reach the host as one server; a
	// time-out of 0 or below is no time-out to go-redis; a negative
	// duration or one it cannot read is a mistake.
	for _, bad := range []string{
		"redis://s1:26379/0?master=", "redis://s1:26379/0?master_name=", "redis://s1:26379,s2:26379/0?master=",
		"redis://h/0?read_timeout=-1s", "redis://h/0?read_timeout=-1", "redis://h/0?read_timeout=0", "redis://h/0?read_timeout=0s",
		"redis://h/0?read_timeout=soon", "redis://h/0?dial_timeout=-5s", "redis://h/0?write_timeout=0", "redis://h/0?pool_timeout=-1ms",
		"redis://h1:7000,h2:7001?dialer_retry_timeout=-1s", "redis://h/0?min_retry_backoff=-8ms", "redis://h/0?max_retry_backoff=x",
		"redis://h/0?conn_max_idle_time=-30m", "redis://h/0?idle_timeout=-1", "redis://h/0?conn_max_lifetime=-1h",
		"redis://h/0?max_conn_age=-1s", "redis://h/0?conn_max_lifetime=1h&conn_max_lifetime_jitter=-1s",
		"redis://h1:7000,h2:7001?route_by_latency_tolerance=-1ms",
	} {
		_, err := parseDSN(bad)
		if !errors.Is(err, dialects.ErrInvalid) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line matching ErrInvalid", bad, err)
		}
	}
	for _, good := range []string{"redis://h/0?read_timeout=3", "redis://h/0?read_timeout=500ms&dial_timeout=2s&write_timeout=1s&pool_timeout=4s",
		"redis://h/0?conn_max_idle_time=0&min_retry_backoff=0&max_retry_backoff=1s", "redis://h1:7000,h2:7001?dialer_retry_timeout=3s"} {
		if _, err := parseDSN(good); err != nil {
			t.Errorf("%s: %v", good, err)
		}
	}
	_, err := parseDSN("redis://:s3cr3t@h/x")
	if err == nil || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("error %v shows the password", err)
	}
}

func TestKeyLayouts(t *testing.T) {
	native, err := newLayout(dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	shed, err := newLayout(dialects.Table{Preset: dialects.PresetShedlock})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][2]string{
		"nightly":     {"schedlock:{nightly}", "job-lock:default:nightly"},
		"a{b}c":       {"schedlock:{a%7Bb%7Dc}", "job-lock:default:a{b}c"},
		"100%":        {"schedlock:{100%25}", "job-lock:default:100%"},
		"é ü {} :tok": {"schedlock:{é ü %7B%7D :tok}", "job-lock:default:é ü {} :tok"},
	} {
		if got := native.key(name); got != want[0] {
			t.Errorf("native key of %q = %q, want %q", name, got, want[0])
		}
		if got := shed.key(name); got != want[1] {
			t.Errorf("shedlock key of %q = %q, want %q", name, got, want[1])
		}
		for _, l := range []layout{native, shed} {
			back, counter, ok := l.nameOf(l.key(name))
			if !ok || counter || back != name {
				t.Errorf("nameOf(%q) = %q %v %v", l.key(name), back, counter, ok)
			}
		}
		back, counter, ok := native.nameOf(native.tokenKey(name))
		if !ok || !counter || back != name {
			t.Errorf("nameOf(%q) = %q %v %v", native.tokenKey(name), back, counter, ok)
		}
	}
	if env, _ := newLayout(dialects.Table{Preset: dialects.PresetShedlock, Name: "prod"}); env.key("x") != "job-lock:prod:x" {
		t.Errorf("env prod: %q", env.key("x"))
	}
	if _, err := newLayout(dialects.Table{Preset: dialects.PresetSysSchedLock}); !errors.Is(err, dialects.ErrUnsupported) {
		t.Errorf("sys_sched_lock: %v, want unsupported", err)
	}
	at, owner := parseShedlockValue("ADDED:2026-01-02T03:04:05.678Z@host:4a5b-uuid")
	if owner != "host:4a5b-uuid" || at.UnixMilli()%1000 != 678 || at.Year() != 2026 {
		t.Errorf("parse ShedLock value: %s %q", at, owner)
	}
}

func FuzzTagRoundTrip(f *testing.F) {
	for _, s := range []string{"x", "{", "}", "%7B", "a{b}c%", "%%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		tag := escapeTag(name)
		if strings.ContainsAny(tag, "{}") {
			t.Fatalf("tag %q of %q holds a brace", tag, name)
		}
		back, ok := unescapeTag(tag)
		if !ok || back != name {
			t.Fatalf("unescape(escape(%q)) = %q, %v", name, back, ok)
		}
	})
}
