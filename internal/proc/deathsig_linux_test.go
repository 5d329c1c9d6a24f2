package proc

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary act as a schedlock stand-in that starts
// a child, prints its pid and waits to be killed.
const helperEnv = "SCHEDLOCK_PROC_DEATHSIG_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		c, err := Start([]string{"sleep", "60"}, nil, IO{})
		if err != nil {
			os.Exit(1)
		}
		os.Stdout.WriteString(strconv.Itoa(c.Pid()) + "\n")
		<-c.Done()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// When the parent dies by SIGKILL, the kernel kills the child too
// (Pdeathsig), so no child runs on with nobody keeping its lease.
func TestChildDiesWithParent(t *testing.T) {
	parent := exec.Command(os.Args[0], "-test.run=^$")
	parent.Env = append(os.Environ(), helperEnv+"=1")
	stdout, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = parent.Process.Kill()
		t.Fatalf("helper printed no pid: %v", err)
	}
	child, err := strconv.Atoi(line[:len(line)-1])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-child, syscall.SIGKILL) })
	if !alive(child) {
		t.Fatalf("child %d is not running", child)
	}
	_ = parent.Process.Signal(syscall.SIGKILL)
	_ = parent.Wait()
	for i := 0; i < 100; i++ {
		if !alive(child) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("child %d still runs 2s after its parent was killed", child)
}
