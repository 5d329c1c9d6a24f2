package cmd

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"
)

// monitor is a raw MONITOR connection to the Redis at addr: every command
// the server runs, one line each.
type monitor struct {
	conn  net.Conn
	lines *bufio.Reader
	addr  string
}

func startMonitor(t *testing.T, addr string) *monitor {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(time.Minute))
	m := &monitor{conn: conn, lines: bufio.NewReader(conn), addr: addr}
	if _, err := conn.Write([]byte("MONITOR\r\n")); err != nil {
		t.Fatal(err)
	}
	if line, err := m.lines.ReadString('\n'); err != nil || line != "+OK\r\n" {
		t.Fatalf("MONITOR: %q, %v", line, err)
	}
	return m
}

// until returns the commands the clients sent (not those scripts ran)
// up to now: it sends an ECHO from a connection of its own and reads up
// to it.
func (m *monitor) until(t *testing.T) []string {
	t.Helper()
	const marker = "schedlock-monitor-end"
	c, err := net.DialTimeout("tcp", m.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("ECHO " + marker + "\r\n")); err != nil {
		t.Fatal(err)
	}
	var commands []string
	for {
		line, err := m.lines.ReadString('\n')
		if err != nil {
			t.Fatalf("MONITOR: %v (read so far: %q)", err, commands)
		}
		switch {
		case strings.Contains(line, marker):
			return commands
		case strings.Contains(line, " lua] "):
		default:
			commands = append(commands, strings.TrimSpace(line))
		}
	}
}

// `schedlock run -- true` on Redis sends at most 4 commands: the
// connection's HELLO, INFO (detection), the acquire and the release,
// each one script sent by EVAL — no script is loaded up front. Counted
// by MONITOR on a server of the test's own, which nothing else uses.
func TestRedisRunSendsAtMostFourCommands(t *testing.T) {
	liveRedis(t)
	addr := extraRedis(t)
	m := startMonitor(t, addr)
	name := "count-" + time.Now().Format("150405.000000")
	r := runCmd(t, false, nil, "run", "--dsn", "redis://"+addr+"/0", "--name", name, "--", "true")
	if r.err != nil {
		t.Fatalf("run: %v\n%s", r.err, r.stderr)
	}
	commands := m.until(t)
	evals := 0
	for _, c := range commands {
		if strings.Contains(c, `"eval`) && strings.Contains(c, name) {
			evals++
		}
		if strings.Contains(strings.ToLower(c), `"script"`) {
			t.Errorf("run sent %s", c)
		}
	}
	if len(commands) > 4 || evals != 2 {
		t.Errorf("run sent %d commands (%d scripts on its lock), want at most 4 with the acquire and the release:\n%s",
			len(commands), evals, strings.Join(commands, "\n"))
	}
}
