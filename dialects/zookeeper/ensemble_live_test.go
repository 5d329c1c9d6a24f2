//go:build unix

package zookeeper_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/zookeeper"
	"github.com/schedlock/schedlock/internal/testnet"
)

// zkServer is one server of an ensemble the test starts and kills.
type zkServer struct {
	id     int
	dir    string
	client string // 127.0.0.1:port
	cfg    string // path of its zoo.cfg
	cmd    *exec.Cmd
}

// ownEnsemble starts an ensemble of n ZooKeeper servers of the test's own
// on free loopback ports (Debian's zookeeper.jar; tickTime 500 ms, so
// sessions of 1–10 s), waits until each serves, and kills them at the end.
func ownEnsemble(t *testing.T, n int) []*zkServer {
	t.Helper()
	const jar = "/usr/share/java/zookeeper.jar"
	if _, err := os.Stat(jar); err != nil {
		t.Fatalf("the ensemble test needs %s (Debian: zookeeper) beside %s: %v", jar, dsnEnv, err)
	}
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatalf("the ensemble test needs java beside %s: %v", dsnEnv, err)
	}
	servers := make([]*zkServer, n)
	var quorum []string
	for i := range servers {
		s := &zkServer{id: i + 1, dir: t.TempDir(), client: testnet.FreeAddr(t)}
		quorum = append(quorum, fmt.Sprintf("server.%d=127.0.0.1:%d:%d", s.id, testnet.FreePort(t), testnet.FreePort(t)))
		servers[i] = s
	}
	classpath := jar
	if _, err := os.Stat("/usr/share/java/slf4j-simple.jar"); err == nil {
		classpath += ":/usr/share/java/slf4j-simple.jar"
	}
	for _, s := range servers {
		data := filepath.Join(s.dir, "data")
		if err := os.MkdirAll(data, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(data, "myid"), []byte(fmt.Sprint(s.id)), 0o600); err != nil {
			t.Fatal(err)
		}
		s.cfg = filepath.Join(s.dir, "zoo.cfg")
		cfg := strings.Join(append([]string{"tickTime=500", "initLimit=20", "syncLimit=10", "dataDir=" + data,
			"clientPort=" + port(s.client), "clientPortAddress=127.0.0.1", "admin.enableServer=false",
			"4lw.commands.whitelist=ruok,srvr"}, quorum...), "\n") + "\n"
		if err := os.WriteFile(s.cfg, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		s.start(t, java, classpath)
		t.Cleanup(func() { s.kill() })
	}
	for _, s := range servers {
		s.waitServing(t)
	}
	return servers
}

func (s *zkServer) start(t *testing.T, java, classpath string) {
	t.Helper()
	log, err := os.OpenFile(filepath.Join(s.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	c := exec.Command(java, "-Xmx256m", "-cp", classpath, "-Dzookeeper.jmx.log4j.disable=true",
		"org.apache.zookeeper.server.quorum.QuorumPeerMain", s.cfg)
	c.Stdout, c.Stderr = log, log
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	s.cmd = c
}

// kill stops the server at once, as a crash would.
func (s *zkServer) kill() {
	if s.cmd != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
		s.cmd = nil
	}
}

// mode is the server's srvr mode ("leader", "follower", …; "" when it
// does not serve).
func (s *zkServer) mode() string {
	c, err := net.DialTimeout("tcp", s.client, time.Second)
	if err != nil {
		return ""
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("srvr")); err != nil {
		return ""
	}
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(sc.Text(), "Mode: "); ok {
			return strings.TrimSpace(m)
		}
	}
	return ""
}

func (s *zkServer) waitServing(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for s.mode() == "" {
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
			t.Fatalf("ZooKeeper server %d did not serve at %s:\n%s", s.id, s.client, lastBytes(string(out), 3000))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func port(addr string) string { _, p, _ := net.SplitHostPort(addr); return p }

func lastBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// TestEnsembleLock runs the lock on an ensemble of three servers of the
// test's own, named by all three:
//   - detect names the ensemble, without the standalone risk;
//   - the leader killed, every client is cut off while a new leader is
//     elected: the holder's lease ends first (a disconnection ends every
//     lease of the session), and only then does a waiting contender get
//     the lock, with a higher token; the holder's session goes on;
//   - a second server killed (no quorum), the contender's lease ends and
//     nothing can be taken; with a server back, the lock is taken again
//     with a higher token.
func TestEnsembleLock(t *testing.T) {
	liveDSN(t) // the servers and jars the live suite has
	servers := ownEnsemble(t, 3)
	var addrs []string
	for _, s := range servers {
		addrs = append(addrs, s.client)
	}
	dsn := "zk://" + strings.Join(addrs, ",") + "/ensemble?session_timeout=4s"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	holder, contender := openLive(t, dsn), openLive(t, dsn)

	info := holder.Detected()
	if !strings.HasPrefix(info.Mode, "ensemble") {
		t.Errorf("detect: mode %q, want the ensemble", info.Mode)
	}
	caps, err := holder.Probe(ctx, dialects.ProbeOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range caps.Risks {
		if r.ID == "standalone" {
			t.Errorf("detect on the ensemble reports %q: %s", r.ID, r.Detail)
		}
	}
	t.Logf("detect: %s %s, mode %q, %d risks", info.Product, info.Version, info.Mode, len(caps.Risks))

	hl, cl := newTable(t, holder), (*zookeeper.Locker)(nil)
	tl, err := contender.LeaseLocker(dialects.Table{Name: hl.Schema().Table})
	if err != nil {
		t.Fatal(err)
	}
	cl = tl.(*zookeeper.Locker)
	lease, err := hl.Acquire(ctx, "report", dialects.Options{Owner: "holder", AtMost: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	first, _ := lease.Token()
	if _, err := cl.Acquire(ctx, "report", dialects.Options{Owner: "contender"}); !errors.Is(err, dialects.ErrHeld) {
		t.Fatalf("contender's acquire while held: %v, want held", err)
	}

	var leader *zkServer
	for _, s := range servers {
		if s.mode() == "leader" {
			leader = s
		}
	}
	if leader == nil {
		t.Fatal("no server is the leader")
	}
	session := holder.SessionID()
	leader.kill()
	next, err := cl.Acquire(ctx, "report", dialects.Options{Owner: "contender", AtMost: time.Minute, Wait: time.Minute, RetryEvery: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("the contender never got the lock after the leader was killed: %v", err)
	}
	select {
	case <-lease.Done():
	default:
		t.Fatal("the contender got the lock while the holder's lease still ran: two holders")
	}
	if !errors.Is(lease.Err(), dialects.ErrLeaseLost) {
		t.Errorf("holder's lease ended with %v, want ErrLeaseLost", lease.Err())
	}
	second, _ := next.Token()
	if second <= first {
		t.Errorf("token %d after the leader was killed is not above %d", second, first)
	}
	if holder.SessionID() != session {
		t.Logf("the holder's session was replaced (%x → %x)", session, holder.SessionID())
	}
	if other, err := hl.Acquire(ctx, "other", dialects.Options{Owner: "holder", Wait: 30 * time.Second}); err != nil {
		t.Errorf("the holder's backend after the leader was killed: %v", err)
	} else {
		_ = other.Release(ctx)
	}

	// No quorum: the lease ends and nothing is taken.
	for _, s := range servers {
		if s != leader {
			s.kill()
			break
		}
	}
	select {
	case <-next.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the contender's lease did not end without quorum")
	}
	actx, acancel := context.WithTimeout(ctx, 3*time.Second)
	if _, err := hl.Acquire(actx, "third", dialects.Options{Owner: "holder"}); err == nil {
		t.Error("an acquire without quorum succeeded")
	}
	acancel()

	// A server back: the lock is taken again.
	java, _ := exec.LookPath("java")
	classpath := "/usr/share/java/zookeeper.jar"
	if _, err := os.Stat("/usr/share/java/slf4j-simple.jar"); err == nil {
		classpath += ":/usr/share/java/slf4j-simple.jar"
	}
	leader.start(t, java, classpath)
	leader.waitServing(t)
	again, err := hl.Acquire(ctx, "report", dialects.Options{Owner: "holder", AtMost: time.Minute, Wait: time.Minute, RetryEvery: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("no acquire after quorum came back: %v", err)
	}
	if third, _ := again.Token(); third <= second {
		t.Errorf("token %d after quorum came back is not above %d", third, second)
	}
	_ = again.Release(ctx)
}
