package zookeeper_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/zookeeper"
)

// curatorJars are the jars of Debian's libcurator-recipes-java (and what
// it pulls in) that the Java peer needs, under /usr/share/java.
var curatorJars = []string{"curator-framework", "curator-client", "curator-recipes",
	"zookeeper", "zookeeper-jute", "guava", "slf4j-api", "slf4j-nop"}

// javaCurator is Apache Curator's own InterProcessMutex in a JVM
// (testdata/curator/CuratorMutex.java), driven over its standard input.
type javaCurator struct {
	t     *testing.T
	in    io.WriteCloser
	lines *bufio.Scanner
}

// startJavaCurator compiles the Java peer and starts it on path. With
// the live ZooKeeper DSN set, a missing JDK or Curator jar fails the
// test: scripts/test.sh installs them.
func startJavaCurator(t *testing.T, servers []string, path string) *javaCurator {
	t.Helper()
	javac, err := exec.LookPath("javac")
	if err != nil {
		t.Fatalf("the Curator test needs a JDK (Debian: default-jdk-headless): %v", err)
	}
	cp := []string{}
	for _, j := range curatorJars {
		f := filepath.Join("/usr/share/java", j+".jar")
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("the Curator test needs %s (Debian: libcurator-recipes-java): %v", f, err)
		}
		cp = append(cp, f)
	}
	classes := t.TempDir()
	if out, err := exec.Command(javac, "-d", classes, "-cp", strings.Join(cp, ":"), "testdata/curator/CuratorMutex.java").CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	cmd := exec.Command(filepath.Join(filepath.Dir(javac), "java"), "-cp", strings.Join(append([]string{classes}, cp...), ":"),
		"CuratorMutex", strings.Join(servers, ","), path)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = in.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	c := &javaCurator{t: t, in: in, lines: bufio.NewScanner(out)}
	c.expect("ready")
	return c
}

// send writes one command line.
func (c *javaCurator) send(cmd string) {
	c.t.Helper()
	if _, err := fmt.Fprintln(c.in, cmd); err != nil {
		c.t.Fatalf("curator: %s: %v", cmd, err)
	}
}

// next is the peer's next answer.
func (c *javaCurator) next() string {
	c.t.Helper()
	if !c.lines.Scan() {
		c.t.Fatalf("curator exited: %v", c.lines.Err())
	}
	return c.lines.Text()
}

func (c *javaCurator) expect(want string) {
	c.t.Helper()
	if got := c.next(); got != want {
		c.t.Fatalf("curator answered %q, want %q", got, want)
	}
}

// TestJavaCurator runs Apache Curator 5's InterProcessMutex itself, in a
// JVM, against schedlock on the same lock: each excludes the other, locks
// ls names Curator's holder, a schedlock waiter gets the lock when
// Curator releases it and a Curator waiter when schedlock does, and no
// node is left behind.
func TestJavaCurator(t *testing.T) {
	dsn := liveDSN(t)
	cfg, err := zookeeper.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	b := openLive(t, dsn)
	l := newTable(t, b)
	ctx := t.Context()
	name := "jobs/nightly report"
	curator := startJavaCurator(t, cfg.Servers, l.NamePath(name))

	// Curator holds: schedlock is refused, and the listing names Curator's
	// holder (its node's data, the client's address).
	curator.send("acquire 10000")
	curator.expect("acquired")
	_, err = l.Acquire(ctx, name, dialects.Options{Owner: "sl-1"})
	var held *dialects.HeldError
	if !errors.As(err, &held) || held.Holder == "" {
		t.Fatalf("acquire while Curator holds: %v; want held, by Curator's address", err)
	}
	listing, err := b.ListLocks(ctx, dialects.ListOptions{Tables: []dialects.Table{{Name: l.Schema().Table}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(listing.Locks) != 1 || listing.Locks[0].Name != name || listing.Locks[0].State != dialects.StateHeld || listing.Locks[0].Owner != held.Holder {
		t.Fatalf("listing while Curator holds: %+v", listing.Locks)
	}

	// A schedlock waiter gets the lock when Curator releases it.
	got := make(chan error, 1)
	var lease dialects.Lease
	go func() {
		var err error
		lease, err = l.Acquire(ctx, name, dialects.Options{Owner: "sl-1", Wait: time.Minute, RetryEvery: 50 * time.Millisecond})
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("schedlock took the lock while Curator held it: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	curator.send("release")
	curator.expect("released")
	if err := <-got; err != nil {
		t.Fatalf("the schedlock waiter after Curator's release: %v", err)
	}

	// schedlock holds: Curator times out, and a Curator waiter gets the
	// lock when schedlock releases it.
	curator.send("acquire 300")
	curator.expect("timeout")
	curator.send("acquire 60000")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		children, _, err := b.ReadConn().Children(l.NamePath(name))
		if err == nil && len(children) == 2 {
			break // Curator's node waits behind schedlock's
		}
		if time.Now().After(deadline) {
			t.Fatalf("Curator did not queue behind schedlock: %v %v", children, err)
		}
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	curator.expect("acquired")
	if _, err := l.Acquire(ctx, name, dialects.Options{Owner: "sl-2"}); !errors.Is(err, dialects.ErrHeld) {
		t.Fatalf("acquire while the Curator waiter holds: %v, want ErrHeld", err)
	}
	curator.send("release")
	curator.expect("released")

	// Nothing is left under the lock's node.
	children, _, err := b.ReadConn().Children(l.NamePath(name))
	if err != nil {
		t.Fatal(err)
	}
	if len(children) != 0 {
		t.Fatalf("nodes left behind: %v", children)
	}
}
