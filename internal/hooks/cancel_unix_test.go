//go:build unix

package hooks

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Fire gives way when its context ends (a signal), however long
// --hook-timeout is: a command hook's process is killed, a POST to a
// server that never answers is dropped, and each is one warning.
func TestFireEndsWithItsContext(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	var warned lines
	set := &Set{Timeout: time.Hour, Warn: warned.add}
	set.Add(Success, mustParse(t, `echo $$ > `+pidFile+`.tmp && mv `+pidFile+`.tmp `+pidFile+`; exec sleep 600`, false))
	set.Add(Success, mustParse(t, srv.URL+"/hook", false))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		set.Fire(ctx, Info{Event: Success, Lock: "job"})
		close(done)
	}()
	var pid int
	for deadline := time.Now().Add(30 * time.Second); pid == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the command hook did not start within 30s")
		}
		if b, err := os.ReadFile(pidFile); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Fire did not return within 30s of its context ending (--hook-timeout 1h)")
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("the command hook (pid %d) still runs", pid)
	}
	w := warned.all()
	if len(w) != 2 || !strings.Contains(w[0], "abandoned") || !strings.Contains(w[1], "abandoned") {
		t.Errorf("warnings %q, want two saying the hooks were abandoned", w)
	}
}
