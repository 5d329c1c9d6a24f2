//go:build unix

package e2e

import (
	"bufio"
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/schedlock/schedlock/internal/tcpproxy"
)

// Exit codes of schedlock run that these tests rely on.
const (
	codeSkipped     = 99 // passed as --skipped-exit-code
	codeLeaseLost   = 113
	codeInterrupted = 130
)

// runArgs is "run --name NAME <backend flags> <extra> -- sh -c SCRIPT".
func runArgs(b backend, name, script string, extra ...string) []string {
	args := append([]string{"run", "--name", name, "--skipped-exit-code", strconv.Itoa(codeSkipped)}, b.args()...)
	args = append(args, extra...)
	return append(args, "--", "sh", "-c", script)
}

// Ten schedlock processes contend for one lock, twenty rounds in a row:
// in every round exactly one runs its command and the nine others exit
// with the skipped code. The winner's command holds on until the nine have
// exited, so every contender tries while the lock is held; were two
// commands to run in one round, both would wait and the count would show.
func TestRunContention(t *testing.T) {
	const procs, rounds = 10, 20
	for _, bc := range allBackends {
		t.Run(bc.name, func(t *testing.T) {
			t.Parallel()
			b := bc.make(t)
			dir := t.TempDir()
			name := lockName("contention")
			gate := filepath.Join(dir, "go")
			script := `echo "$SCHEDLOCK_OWNER" >> runs; while [ ! -e go ]; do sleep 0.01; done`
			start0 := time.Now()
			for round := 1; round <= rounds; round++ {
				_ = os.Remove(gate)
				before := countLines(t, filepath.Join(dir, "runs"))
				rs := make([]*run, procs)
				for i := range rs {
					rs[i] = start(t, dir, runArgs(b, name, script)...)
				}
				deadline := time.Now().Add(time.Minute)
				for exited(rs) < procs-1 && time.Now().Before(deadline) {
					time.Sleep(5 * time.Millisecond)
				}
				if err := os.WriteFile(gate, nil, 0o644); err != nil {
					t.Fatal(err)
				}
				ran, skipped := 0, 0
				for _, r := range rs {
					switch code := r.wait(t, time.Minute); code {
					case 0:
						ran++
					case codeSkipped:
						skipped++
						if !strings.Contains(r.stderr.String(), "is held") {
							t.Errorf("round %d: skipped run's stderr does not name the holder: %q", round, r.stderr.String())
						}
					default:
						t.Errorf("round %d: exit %d, stderr: %s", round, code, r.stderr.String())
					}
				}
				commands := countLines(t, filepath.Join(dir, "runs")) - before
				if ran != 1 || skipped != procs-1 || commands != 1 {
					t.Fatalf("round %d: %d ran, %d skipped, %d commands started; want 1, %d, 1", round, ran, skipped, commands, procs-1)
				}
			}
			t.Logf("%s: %d rounds of %d processes in %s", b.name, rounds, procs, time.Since(start0).Round(time.Millisecond))
		})
	}
}

func exited(rs []*run) int {
	n := 0
	for _, r := range rs {
		select {
		case <-r.done:
			n++
		default:
		}
	}
	return n
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// holdScript records the command's pid and then sleeps; exec makes the pid
// that of the sleep itself.
const holdScript = `echo $$ > child; exec sleep 30`

// startHolder starts a run whose command sleeps, waits until the command
// runs and returns the run and the command's pid.
func startHolder(t *testing.T, dir string, args []string) (*run, int) {
	t.Helper()
	r := start(t, dir, args...)
	pid, err := strconv.Atoi(strings.TrimSpace(waitFile(t, filepath.Join(dir, "child"), 15*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	killGroupAtEnd(t, pid)
	return r, pid
}

// crash SIGKILLs schedlock and checks that its command dies with it.
func crash(t *testing.T, r *run, child int) {
	t.Helper()
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r.wait(t, 15*time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for running(child) {
		if time.Now().After(deadline) {
			t.Fatalf("command %d still runs 10s after schedlock was killed", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// SIGKILL of schedlock holding a session lock: the database frees the lock
// with the connection, so a run acquires as soon as the server has seen the
// connection close, with no lease to wait for. The holder runs with
// --at-most 1h: were the lock a lease, no run would get it within the
// test's bound.
func TestRunCrashSessionFreesAtOnce(t *testing.T) {
	const bound = 30 * time.Second
	for _, bc := range allBackends {
		if !strings.HasSuffix(bc.name, "/session") {
			continue
		}
		t.Run(bc.name, func(t *testing.T) {
			t.Parallel()
			b := bc.make(t)
			dir := t.TempDir()
			name := lockName("crash")
			r, child := startHolder(t, dir, runArgs(b, name, holdScript, "--at-most", "1h"))
			if busy := runOnce(t, dir, runArgs(b, name, "true")...); busy.code != codeSkipped {
				t.Fatalf("second run while held: exit %d, want %d; stderr: %s", busy.code, codeSkipped, busy.stderr.String())
			}
			crash(t, r, child)
			killed := time.Now()
			// The server frees the lock once it has read the closed
			// connection; a run in between is refused, so try until one
			// gets it.
			tries := 0
			for {
				tries++
				next := runOnce(t, dir, runArgs(b, name, "true")...)
				if next.code == 0 {
					t.Logf("%s: run %d after the crash acquired, %s after it", b.name, tries, next.ended.Sub(killed).Round(time.Millisecond))
					break
				}
				if next.code != codeSkipped {
					t.Fatalf("run after the crash: exit %d; stderr: %s", next.code, next.stderr.String())
				}
				if time.Since(killed) > bound {
					t.Fatalf("no run acquired the lock within %s of the crash (%d tries); stderr: %s", bound, tries, next.stderr.String())
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

// SIGKILL of schedlock holding a table lock: the lease outlives the
// holder, so runs are skipped until at-most has passed and acquire after.
// What a run may see depends only on when it ran relative to the lease, not
// on how fast the machine is: a run that ended before the lease could end
// is refused, and one that began well after it ended acquires.
func TestRunCrashTableWaitsForLease(t *testing.T) {
	const atMost = 3 * time.Second
	// slack covers the lease columns' precision (whole seconds at worst).
	const slack = 2 * time.Second
	for _, bc := range allBackends {
		if !strings.HasSuffix(bc.name, "/table") {
			continue
		}
		t.Run(bc.name, func(t *testing.T) {
			t.Parallel()
			b := bc.make(t)
			dir := t.TempDir()
			name := lockName("crash")
			lease := []string{"--at-most", atMost.String(), "--kill-grace", "1s"}
			t0 := time.Now() // the lease cannot start before this
			r, child := startHolder(t, dir, runArgs(b, name, holdScript, lease...))
			crash(t, r, child)
			// The holder refreshed its lease until it was killed, so the
			// lease ends at most at-most after the crash.
			crashed := time.Now()

			refusedInLease := 0
			for tries := 1; ; tries++ {
				next := runOnce(t, dir, runArgs(b, name, "true")...)
				if next.code == 0 {
					if end := t0.Add(atMost); next.ended.Before(end) {
						t.Fatalf("lock acquired by a run that ended %s before the lease could end", end.Sub(next.ended))
					}
					t.Logf("%s: run %d acquired, beginning %s after the holder was killed; %d runs refused within the first lease",
						b.name, tries, next.began.Sub(crashed).Round(time.Millisecond), refusedInLease)
					break
				}
				if next.code != codeSkipped {
					t.Fatalf("run after the crash: exit %d; stderr: %s", next.code, next.stderr.String())
				}
				if late := next.began.Sub(crashed.Add(atMost)); late > slack {
					t.Fatalf("a run that began %s after the lease end was refused; stderr: %s", late, next.stderr.String())
				}
				if next.ended.Before(t0.Add(atMost)) {
					refusedInLease++
				}
				time.Sleep(200 * time.Millisecond)
			}
		})
	}
}

// heartbeatScript records the command's pid, then appends the time in
// nanoseconds to hb every 50ms until it is stopped.
const heartbeatScript = `echo $$ > child; while :; do date +%s%N >> hb; sleep 0.05; done`

// lastHeartbeat is the last time the command wrote to hb.
func lastHeartbeat(t *testing.T, path string) time.Time {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var last string
	for s := bufio.NewScanner(f); s.Scan(); {
		if line := strings.TrimSpace(s.Text()); line != "" {
			last = line
		}
	}
	ns, err := strconv.ParseInt(last, 10, 64)
	if err != nil {
		t.Fatalf("heartbeat %q: %v", last, err)
	}
	return time.Unix(0, ns)
}

// assertStopped checks that the command and its heartbeat are gone.
func assertStopped(t *testing.T, dir string, child int) {
	t.Helper()
	if running(child) {
		t.Fatalf("command %d still runs after schedlock exited", child)
	}
	hb := filepath.Join(dir, "hb")
	before := countLines(t, hb)
	time.Sleep(300 * time.Millisecond)
	if after := countLines(t, hb); after != before {
		t.Fatalf("heartbeat went on after schedlock exited: %d lines, then %d", before, after)
	}
}

// The database goes away in the middle of a table lock: the command must
// be gone before the lease ends, and schedlock exits with the lease-lost
// code. "cut" closes the connections (the server restarts); "stall" lets
// nothing through (packets dropped), so every refresh hangs.
func TestRunTableLeaseLostStopsCommandBeforeLeaseEnd(t *testing.T) {
	const atMost = 4 * time.Second
	for _, mode := range []string{"cut", "stall"} {
		t.Run("postgres/"+mode, func(t *testing.T) {
			t.Parallel()
			raw := liveDSN(t, envPostgres)
			proxy, err := tcpproxy.Start(serverAddr(t, raw))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = proxy.Close() })
			b := newBackend(t, raw, "table")
			b.dsn = withAddr(t, raw, proxy.Addr())
			dir := t.TempDir()
			name := lockName("lost")

			r := start(t, dir, runArgs(b, name, heartbeatScript, "--at-most", atMost.String(), "--kill-grace", "1s")...)
			child, err := strconv.Atoi(strings.TrimSpace(waitFile(t, filepath.Join(dir, "child"), 15*time.Second)))
			if err != nil {
				t.Fatal(err)
			}
			killGroupAtEnd(t, child)
			waitFile(t, filepath.Join(dir, "hb"), 5*time.Second)
			locker := tableLocker(t, raw, b.table)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			// The cut must come before the next refresh (every atMost/3),
			// or the lease end read here moves: take a lease end read
			// within atMost/6 of being written, else wait for the next
			// refresh and try again.
			var leaseEnd time.Time
			for deadline := time.Now().Add(30 * time.Second); ; {
				row, found, err := locker.Inspect(ctx, name)
				if err != nil || !found {
					t.Fatalf("lock row: found %v, %v", found, err)
				}
				if age := atMost - time.Until(row.Until); age < atMost/6 {
					leaseEnd = row.Until // the database's lease end, before the next refresh
					break
				}
				for {
					if time.Now().After(deadline) {
						t.Fatal("no fresh lease end read within 30s")
					}
					time.Sleep(10 * time.Millisecond)
					again, _, err := locker.Inspect(ctx, name)
					if err != nil {
						t.Fatal(err)
					}
					if !again.Until.Equal(row.Until) {
						break
					}
				}
			}
			if mode == "cut" {
				proxy.Cut()
			} else {
				proxy.Stall()
			}
			cutAt := time.Now()

			if code := r.wait(t, 20*time.Second); code != codeLeaseLost {
				t.Fatalf("exit %d, want %d; stderr: %s", code, codeLeaseLost, r.stderr.String())
			}
			after, _, err := locker.Inspect(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			if !after.Until.Equal(leaseEnd) {
				t.Fatalf("lease end moved from %s to %s: a refresh got through after the cut", leaseEnd, after.Until)
			}
			last := lastHeartbeat(t, filepath.Join(dir, "hb"))
			if !last.Before(leaseEnd) {
				t.Fatalf("last heartbeat %s is not before the lease end %s", last.Format(time.RFC3339Nano), leaseEnd.Format(time.RFC3339Nano))
			}
			assertStopped(t, dir, child)
			t.Logf("%s: cut %s into the lease; last heartbeat %s before the lease end; schedlock exited %s after the cut; stderr: %s",
				mode, atMost-leaseEnd.Sub(cutAt).Round(time.Millisecond), leaseEnd.Sub(last).Round(time.Millisecond),
				r.ended.Sub(cutAt).Round(time.Millisecond), strings.TrimSpace(r.stderr.String()))
		})
	}
}

// The connection of a session lock is cut, stalls, or its session is
// killed (pg_terminate_backend, KILL): the lock is lost with it, so the
// command is killed (at once for a cut or a kill: the lock connection
// watches its socket; within a few seconds for a stall, by its pings)
// and schedlock exits with the lease-lost code. Once the server has seen
// the connection close, the lock is free for the next run.
func TestRunSessionLostStopsCommand(t *testing.T) {
	for _, env := range []string{envPostgres, envMySQL} {
		for _, mode := range []string{"cut", "stall", "kill"} {
			family := map[string]string{envPostgres: "postgres", envMySQL: "mysql"}[env]
			t.Run(family+"/"+mode, func(t *testing.T) {
				t.Parallel()
				raw := liveDSN(t, env)
				proxy, err := tcpproxy.Start(serverAddr(t, raw))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = proxy.Close() })
				direct := newBackend(t, raw, "session")
				b := direct
				b.dsn = withAddr(t, raw, proxy.Addr())
				dir := t.TempDir()
				name := lockName("lost")

				r := start(t, dir, runArgs(b, name, heartbeatScript, "--kill-grace", "1s")...)
				child, err := strconv.Atoi(strings.TrimSpace(waitFile(t, filepath.Join(dir, "child"), 15*time.Second)))
				if err != nil {
					t.Fatal(err)
				}
				killGroupAtEnd(t, child)
				waitFile(t, filepath.Join(dir, "hb"), 5*time.Second)
				var session string
				db := connect(t, raw)
				admin := db.LockAdmin()
				if mode == "kill" {
					e, found, err := admin.SessionLock(t.Context(), name)
					if err != nil || !found || e.Holder == nil || e.Holder.SessionID == "" {
						t.Fatalf("holder of %s: %+v, %v, %v", name, e, found, err)
					}
					session = e.Holder.SessionID
				}
				switch mode {
				case "cut":
					proxy.Cut()
				case "stall":
					proxy.Stall()
				case "kill":
					if err := admin.Kill(t.Context(), session); err != nil {
						t.Fatalf("kill session %s: %v", session, err)
					}
				}
				cutAt := time.Now()
				childDead := make(chan time.Time, 1)
				go func() {
					for running(child) {
						time.Sleep(time.Millisecond)
					}
					childDead <- time.Now()
				}()
				if code := r.wait(t, time.Minute); code != codeLeaseLost {
					t.Fatalf("exit %d, want %d; stderr: %s", code, codeLeaseLost, r.stderr.String())
				}
				limit := 15 * time.Second // a stall is seen by the pings: about 4s
				if mode != "stall" {
					limit = 2 * time.Second // a closed connection is seen at once (target: tens of ms)
				}
				if d := r.ended.Sub(cutAt); d > limit {
					t.Fatalf("schedlock exited %s after the %s, want within %s", d, mode, limit)
				}
				select {
				case dead := <-childDead:
					t.Logf("%s: the command was dead %s after the %s", family, dead.Sub(cutAt).Round(time.Millisecond), mode)
				case <-time.After(5 * time.Second):
					t.Fatalf("the command still runs 5s after schedlock exited")
				}
				assertStopped(t, dir, child)
				// A stalled connection is still open for the server, which
				// keeps the lock until it closes.
				proxy.Cut()
				next := runOnce(t, dir, runArgs(direct, name, "true", "--wait", "20s")...)
				if next.code != 0 {
					t.Fatalf("run after the %s: exit %d; stderr: %s", mode, next.code, next.stderr.String())
				}
				t.Logf("stopped %s after the %s; stderr: %s", r.ended.Sub(cutAt).Round(time.Millisecond), mode, strings.TrimSpace(r.stderr.String()))
			})
		}
	}
}

// signalScript traps TERM: it notes the signal, finishes only once the
// file "finish" exists (the lock must stay held meanwhile) and exits 7.
const signalScript = `trap 'echo term >> got; while [ ! -e finish ]; do sleep 0.05; done; exit 7' TERM; echo $$ > child; while :; do sleep 0.05; done`

// SIGTERM to schedlock goes to the command; the lock is released only
// after the command has exited; schedlock exits with the command's code.
func TestRunForwardsTermAndReleasesAfterExit(t *testing.T) {
	for _, bc := range []backendCase{allBackends[0], allBackends[4]} {
		t.Run(bc.name, func(t *testing.T) {
			t.Parallel()
			b := bc.make(t)
			dir := t.TempDir()
			name := lockName("signal")
			r := start(t, dir, runArgs(b, name, signalScript)...)
			child, err := strconv.Atoi(strings.TrimSpace(waitFile(t, filepath.Join(dir, "child"), 15*time.Second)))
			if err != nil {
				t.Fatal(err)
			}
			killGroupAtEnd(t, child)
			if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			waitFile(t, filepath.Join(dir, "got"), 15*time.Second)
			if busy := runOnce(t, dir, runArgs(b, name, "true")...); busy.code != codeSkipped {
				t.Fatalf("run while the command handles SIGTERM: exit %d, want %d (lock still held); stderr: %s", busy.code, codeSkipped, busy.stderr.String())
			}
			if err := os.WriteFile(filepath.Join(dir, "finish"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if code := r.wait(t, 30*time.Second); code != 7 {
				t.Fatalf("exit %d, want the command's 7; stderr: %s", code, r.stderr.String())
			}
			if got := strings.TrimSpace(string(mustRead(t, filepath.Join(dir, "got")))); got != "term" {
				t.Fatalf("command saw %q, want one SIGTERM", got)
			}
			if next := runOnce(t, dir, runArgs(b, name, "true")...); next.code != 0 {
				t.Fatalf("run after the command exited: exit %d; stderr: %s", next.code, next.stderr.String())
			}
		})
	}
}

// SIGHUP is forwarded too, and does not count as an interruption: the
// command's exit code (129, killed by SIGHUP) passes through.
func TestRunForwardsHangup(t *testing.T) {
	// schedlock must start with SIGHUP at its default even when the tests
	// run under nohup: while this process handles SIGHUP, the processes
	// it starts get the default action.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	b := newBackend(t, sqliteDSN(t), "table")
	dir := t.TempDir()
	r, _ := startHolder(t, dir, runArgs(b, lockName("hup"), `echo $$ > child; while :; do sleep 0.05; done`))
	if err := r.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if code := r.wait(t, 10*time.Second); code != 128+int(syscall.SIGHUP) {
		t.Fatalf("exit %d, want %d; stderr: %s", code, 128+int(syscall.SIGHUP), r.stderr.String())
	}
}

// nohupScript ignores nothing itself: on SIGTERM it notes it and exits 0.
const nohupScript = `trap 'echo term > got; exit 0' TERM; echo $$ > child; while :; do sleep 0.05; done`

// `nohup schedlock run …`: SIGHUP, ignored when schedlock started, stays
// ignored — schedlock neither dies of it nor forwards it, and the command
// inherits it ignored. SIGTERM, sent after the two SIGHUPs, is forwarded
// and ends the command with 0; had either SIGHUP reached the command, it
// would have died of it first (129).
func TestRunKeepsIgnoredHangup(t *testing.T) {
	b := newBackend(t, sqliteDSN(t), "table")
	dir := t.TempDir()
	args := append([]string{"-c", `trap '' HUP; exec "$0" "$@"`, binary}, runArgs(b, lockName("nohup"), nohupScript)...)
	r := startArgv(t, dir, "sh", args...)
	child, err := strconv.Atoi(strings.TrimSpace(waitFile(t, filepath.Join(dir, "child"), 15*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	killGroupAtEnd(t, child)
	if err := r.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(-child, syscall.SIGHUP); err != nil { // a hang-up of the command's own group
		t.Fatal(err)
	}
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := r.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("exit %d, want 0 (the command's, after SIGTERM); stderr: %s", code, r.stderr.String())
	}
	if got := strings.TrimSpace(string(mustRead(t, filepath.Join(dir, "got")))); got != "term" {
		t.Fatalf("command wrote %q, want term", got)
	}
}

// SIGINT while waiting for the lock gives up at once (130) and never
// starts the command.
func TestRunInterruptWhileWaiting(t *testing.T) {
	b := newBackend(t, sqliteDSN(t), "table")
	dir := t.TempDir()
	name := lockName("wait")
	startHolder(t, dir, runArgs(b, name, holdScript))
	waiter := start(t, dir, runArgs(b, name, `touch waiter-ran`, "--wait", "2m", "-v")...)
	waiter.waitStderr(t, "waiting up to", time.Minute)
	sent := time.Now()
	if err := waiter.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := waiter.wait(t, 30*time.Second); code != codeInterrupted {
		t.Fatalf("exit %d, want %d; stderr: %s", code, codeInterrupted, waiter.stderr.String())
	}
	// "At once" against a wait of 2 minutes; the bound is loose for a
	// busy machine.
	if d := waiter.ended.Sub(sent); d > 10*time.Second {
		t.Fatalf("waiter took %s to give up", d)
	}
	if _, err := os.Stat(filepath.Join(dir, "waiter-ran")); err == nil {
		t.Fatal("the waiter's command ran")
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
