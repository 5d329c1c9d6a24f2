package redis_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/redis"
	"github.com/schedlock/schedlock/internal/tcpproxy"
	"github.com/schedlock/schedlock/internal/testnet"
)

// ownServer starts a redis-server of the test's own on a free loopback
// port, without persistence, and stops it at the end. It needs the
// binary only when the live tests run (SCHEDLOCK_TEST_REDIS_DSN set).
func ownServer(t *testing.T) (port int, start func(), stop func()) {
	t.Helper()
	return ownServerArgs(t)
}

// ownServerArgs is ownServer with more redis-server arguments; the
// server's working directory is a temporary one of its own.
func ownServerArgs(t *testing.T, args ...string) (port int, start func(), stop func()) {
	t.Helper()
	liveDSN(t)
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("the restart test needs redis-server: %v", err)
	}
	port = testnet.FreePort(t)
	dir := t.TempDir()
	var cmd *exec.Cmd
	stop = func() {
		if cmd != nil && cmd.Process != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			cmd = nil
		}
	}
	start = func() {
		cmd = exec.Command(bin, append([]string{"--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir}, args...)...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		c := goredis.NewClient(&goredis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port)})
		defer c.Close()
		deadline := time.Now().Add(10 * time.Second)
		for c.Ping(context.Background()).Err() != nil {
			if time.Now().After(deadline) {
				t.Fatal("redis-server did not answer within 10s")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	t.Cleanup(stop)
	start()
	return port, start, stop
}

// Redis restarted without persistence forgets the lock: the holder finds
// out at its next refresh (ErrLeaseLost, Done closed), and another node
// can take the lock at once — the data was lost, which detect reports as
// the no-persistence risk. The counter key was lost with it, yet the
// second holder's fencing token is above the first's: the server's clock
// is the token's floor, so a resource that keeps the highest token it
// has seen refuses the first holder.
func TestRestartWithoutPersistenceLosesTheLease(t *testing.T) {
	port, start, stop := ownServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dsn := fmt.Sprintf("redis://127.0.0.1:%d/0", port)
	b, err := redis.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	caps, err := b.Probe(ctx, dialects.ProbeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !hasRisk(caps.Risks, "no-persistence") {
		t.Errorf("risks %+v: want no-persistence", caps.Risks)
	}
	l, err := b.Locker(dialects.StrategyTable, dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	lease, err := l.Acquire(ctx, "nightly", dialects.Options{AtMost: time.Minute, Owner: "holder"})
	if err != nil {
		t.Fatal(err)
	}
	first, ok := lease.Token()
	if !ok {
		t.Fatal("the native layout's lease has no token")
	}
	stop()
	start()
	err = lease.Refresh(ctx)
	for i := 0; err != nil && !errors.Is(err, dialects.ErrLeaseLost) && i < 50; i++ {
		time.Sleep(100 * time.Millisecond) // the pool's dead connections are replaced
		err = lease.Refresh(ctx)
	}
	if !errors.Is(err, dialects.ErrLeaseLost) {
		t.Fatalf("refresh after the restart: %v, want the lease lost", err)
	}
	select {
	case <-lease.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done is still open after the refresh reported the loss")
	}
	other, err := l.Acquire(ctx, "nightly", dialects.Options{AtMost: time.Minute, Owner: "other"})
	if err != nil {
		t.Fatalf("after the data was lost another node should get the lock: %v", err)
	}
	defer other.Release(ctx)
	if tok, _ := other.Token(); tok <= first {
		t.Errorf("token after the restart %d, not above the first holder's %d: the token does not fence across the lost data", tok, first)
	}
}

func hasRisk(risks []dialects.Risk, id string) bool {
	for _, r := range risks {
		if r.ID == id {
			return true
		}
	}
	return false
}

// A holder cut off from Redis by the proxy ends its lease (Done closes)
// while its key still lives on the server: no one else can hold the lock
// before the holder has stopped.
func TestConnectionCutEndsTheLeaseFirst(t *testing.T) {
	direct, b, proxy := viaProxy(t, "dial_timeout=200ms&read_timeout=200ms&write_timeout=200ms&max_retries=0")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prefix := "schedlock_cut_" + fmt.Sprint(time.Now().UnixNano())
	l, dl := lockersOn(t, b, direct, dialects.Table{Name: prefix})
	lease, err := l.Acquire(ctx, "report", dialects.Options{AtMost: 1500 * time.Millisecond, Owner: "cut-off"})
	if err != nil {
		t.Fatal(err)
	}
	// The lease ends, on the host clock, no later than its key on the
	// server's: a holder that loses Redis stops first.
	key := prefix + ":{report}"
	serverEnd, err := direct.Client().PExpireTime(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	if until := lease.Until(); until.After(time.UnixMilli(int64(serverEnd / time.Millisecond))) {
		t.Fatalf("lease ends at %s on the host, after its key on the server (%s)", until, time.UnixMilli(int64(serverEnd/time.Millisecond)))
	}
	proxy.Cut()
	if err := lease.Refresh(ctx); err == nil {
		t.Fatal("refresh through a cut connection succeeded")
	}
	select {
	case <-lease.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the cut-off holder's lease did not end")
	}
	if !errors.Is(lease.Err(), dialects.ErrLeaseLost) {
		t.Errorf("Err %v, want the lease lost", lease.Err())
	}
	// The holder has been told; the server may still keep its key a
	// little. Whoever takes the lock now takes it after the holder stopped.
	other, err := dl.Acquire(ctx, "report", dialects.Options{AtMost: time.Minute, Owner: "next", Wait: 10 * time.Second, RetryEvery: 20 * time.Millisecond})
	if err != nil {
		t.Fatalf("the next holder never got the lock: %v", err)
	}
	_ = other.Release(ctx)
}

// An acquire whose context ends while its script is on the wire (the
// proxy holds it) still learns the script's outcome: the lock it took is
// released again and the acquire fails with the context's error, so no
// key is left to hold the lock until at-most passes.
func TestAcquireEndedInFlightLeavesNoLock(t *testing.T) {
	direct, b, proxy := viaProxy(t, "read_timeout=30s&max_retries=0")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	prefix := "schedlock_inflight_" + fmt.Sprint(time.Now().UnixNano())
	for _, preset := range []string{"schedlock", "shedlock"} {
		t.Run(preset, func(t *testing.T) {
			l, dl := lockersOn(t, b, direct, dialects.Table{Name: prefix + preset, Preset: preset})
			// The client's connection is open before the proxy stalls.
			if err := b.Client().Ping(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			proxy.Stall()
			restored := make(chan struct{})
			time.AfterFunc(time.Second, func() { proxy.Restore(); close(restored) })
			actx, acancel := context.WithTimeout(ctx, 300*time.Millisecond)
			defer acancel()
			lease, err := l.Acquire(actx, "report", dialects.Options{AtMost: 10 * time.Minute, AtLeast: 5 * time.Minute, Owner: "in-flight"})
			if err == nil {
				t.Fatalf("acquire succeeded after its context ended (lease %v)", lease.Until())
			}
			if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "released again") {
				t.Errorf("acquire: %v; want the context's error, the lock released again", err)
			}
			<-restored
			// Had the script been cut off, the proxy would deliver it
			// now and the key would live 10 minutes.
			time.Sleep(200 * time.Millisecond)
			other, err := dl.Acquire(ctx, "report", dialects.Options{AtMost: time.Minute, Owner: "next"})
			if err != nil {
				t.Fatalf("the lock is still taken after the abandoned acquire: %v", err)
			}
			_ = other.Release(ctx)
		})
	}
}

// A waiting acquire rides out a cut connection: it keeps waiting while
// the path is cut (a command through the proxy fails meanwhile), and it
// gets the lock once the path is back and the holder has released.
func TestWaitingAcquireRidesOutACut(t *testing.T) {
	direct, b, proxy := viaProxy(t, "dial_timeout=200ms&read_timeout=200ms&write_timeout=200ms&max_retries=0")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l, dl := lockersOn(t, b, direct, dialects.Table{Name: "schedlock_ride_" + fmt.Sprint(time.Now().UnixNano())})
	held, err := dl.Acquire(ctx, "report", dialects.Options{AtMost: time.Minute, Owner: "holder"})
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		lease dialects.Lease
		err   error
	}
	got := make(chan result, 1)
	go func() {
		lease, err := l.Acquire(ctx, "report", dialects.Options{AtMost: time.Minute, Owner: "waiter", Wait: 30 * time.Second, RetryEvery: 50 * time.Millisecond})
		got <- result{lease, err}
	}()
	time.Sleep(200 * time.Millisecond) // the waiter is refused a few times
	proxy.Cut()
	time.Sleep(500 * time.Millisecond) // its tries fail on the cut path
	if err := b.Client().Ping(ctx).Err(); err == nil {
		t.Fatal("a command went through the cut proxy")
	}
	select {
	case r := <-got:
		t.Fatalf("the waiting acquire returned while the holder held the lock and the path was cut: %v", r.err)
	default:
	}
	proxy.Restore()
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil {
		t.Fatalf("the waiting acquire did not ride out the cut: %v", r.err)
	}
	if r.lease.Owner() != "waiter" {
		t.Errorf("lease owner %q", r.lease.Owner())
	}
	_ = r.lease.Release(ctx)
}

// viaProxy opens the live Redis directly and through a proxy of the
// test's own, the proxied backend with the DSN parameters params.
func viaProxy(t *testing.T, params string) (direct, proxied *redis.Backend, proxy *tcpproxy.Proxy) {
	t.Helper()
	direct = openLive(t)
	opts, err := goredis.ParseURL(liveDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy, err = tcpproxy.Start(opts.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	t.Cleanup(proxy.Restore) // runs first: a stalled proxy must not hold up the other cleanups
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	proxied, err = redis.Open(ctx, fmt.Sprintf("redis://%s/%d?%s", proxy.Addr(), opts.DB, params))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxied.Close() })
	return direct, proxied, proxy
}

// lockersOn returns the lockers of table on the proxied and the direct
// backend; the table's keys are dropped at the end.
func lockersOn(t *testing.T, proxied, direct *redis.Backend, table dialects.Table) (l, dl dialects.Locker) {
	t.Helper()
	l, err := proxied.Locker(dialects.StrategyTable, table)
	if err != nil {
		t.Fatal(err)
	}
	dl, err = direct.Locker(dialects.StrategyTable, table)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dl.(dialects.TableDropper).DropTable(context.Background()) })
	return l, dl
}
