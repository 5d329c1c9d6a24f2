package cmd

import (
	"encoding/binary"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/schedlock/schedlock/internal/livetest"
)

// zkRequests is a loopback proxy in front of a ZooKeeper server that
// decodes the request frames clients send through it (a 4-byte length,
// then the request: the first frame of a connection is the session's
// connect, the others start with xid and op code).
type zkRequests struct {
	mu  sync.Mutex
	ops []string
}

// ZooKeeper's op codes the lock uses (zookeeper.jute).
var zkOpNames = map[int32]string{1: "create", 2: "delete", 3: "exists", 4: "getData", 5: "setData",
	8: "getChildren", 12: "getChildren2", 14: "multi", -11: "closeSession", 11: "ping"}

func startZKProxy(t *testing.T, server string) (addr string, r *zkRequests) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	r = &zkRequests{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go r.relay(c, server)
		}
	}()
	return ln.Addr().String(), r
}

func (r *zkRequests) relay(c net.Conn, server string) {
	defer c.Close()
	s, err := net.Dial("tcp", server)
	if err != nil {
		return
	}
	defer s.Close()
	go func() { _, _ = io.Copy(c, s) }()
	var hdr [4]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return
	}
	if string(hdr[:]) == "srvr" { // a four-letter word, on a connection of its own
		_, _ = s.Write(hdr[:])
		_, _ = io.Copy(s, c)
		return
	}
	for first := true; ; first = false {
		n := binary.BigEndian.Uint32(hdr[:])
		body := make([]byte, n)
		if _, err := io.ReadFull(c, body); err != nil {
			return
		}
		op := "connect"
		if !first && len(body) >= 8 {
			code := int32(binary.BigEndian.Uint32(body[4:8]))
			if op = zkOpNames[code]; op == "" {
				op = "op" + strconv.Itoa(int(code))
			}
		}
		if op != "ping" {
			r.mu.Lock()
			r.ops = append(r.ops, op)
			r.mu.Unlock()
		}
		if _, err := s.Write(append(hdr[:], body...)); err != nil {
			return
		}
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			return
		}
	}
}

func (r *zkRequests) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops = nil
}

func (r *zkRequests) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ops...)
}

// `schedlock run -- true` on ZooKeeper sends, besides the session's
// connect and close, at most 4 requests: the chroot's access check,
// and Curator's create, getChildren and delete. Counted by a proxy that
// sees this run's connections alone.
func TestZooKeeperRunSendsAtMostFourRequests(t *testing.T) {
	u, err := url.Parse(livetest.DSN(t, livetest.ZooKeeper))
	if err != nil {
		t.Fatal(err)
	}
	addr, reqs := startZKProxy(t, strings.Split(u.Host, ",")[0])
	u.Host = addr
	name := "count-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	// The first run makes the table's and the name's nodes; the second,
	// counted, finds them.
	for i, args := range [][]string{{"--create-table"}, nil} {
		r := runCmd(t, false, nil, append(append([]string{"run", "--dsn", u.String()}, args...), "--name", name, "--", "true")...)
		if r.err != nil {
			t.Fatalf("run %d: %v\n%s", i+1, r.err, r.stderr)
		}
		// The session's close is sent as the run ends: wait for it.
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) && !strings.Contains(strings.Join(reqs.list(), " "), "closeSession") {
			time.Sleep(10 * time.Millisecond)
		}
		if i == 0 {
			reqs.reset()
		}
	}
	var requests []string
	for _, op := range reqs.list() {
		if op != "connect" && op != "closeSession" {
			requests = append(requests, op)
		}
	}
	if len(requests) > 4 || !strings.Contains(strings.Join(requests, " "), "create") || !strings.Contains(strings.Join(requests, " "), "delete") {
		t.Errorf("run sent %d requests %v (all: %v), want at most 4 with the create and the delete", len(requests), requests, reqs.list())
	}
}
