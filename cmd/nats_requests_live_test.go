package cmd

import (
	"strings"
	"sync"
	"testing"
	"time"

	natsgo "github.com/nats-io/nats.go"
)

// What `schedlock run -- true` sends to a NATS server: the messages it
// publishes, seen by a subscriber to every subject of the account
// (JetStream API requests and KV writes are messages on subjects; the
// server's replies to _INBOX subjects and its advisories on $JS.EVENT are
// left out). 4: the stream info of the bucket twice (Open's detection,
// then nats.go's KeyValue binding), the acquire's and the
// release's KV writes.
func TestNATSRunSendsFourRequests(t *testing.T) {
	n := startNATS(t)
	dsn := n.bucket(t, "count")
	nc, err := natsgo.Connect("nats://" + n.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var mu sync.Mutex
	var subjects []string
	sub, err := nc.Subscribe(">", func(m *natsgo.Msg) {
		if !strings.HasPrefix(m.Subject, "_INBOX.") && !strings.HasPrefix(m.Subject, "$JS.EVENT.") {
			mu.Lock()
			subjects = append(subjects, m.Subject)
			mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if r := runCmd(t, false, nil, "run", "--dsn", dsn, "--name", "job", "--", "true"); r.err != nil {
		t.Fatalf("run: %v\n%s", r.err, r.stderr)
	}
	// The subscriber's own connection delivers in order: a message
	// published after the run's arrives after the run's.
	if err := nc.Publish("schedlock.test.end", nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		done := len(subjects) > 0 && subjects[len(subjects)-1] == "schedlock.test.end"
		mu.Unlock()
		if done || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = sub.Unsubscribe()
	mu.Lock()
	defer mu.Unlock()
	sent := subjects[:max(0, len(subjects)-1)]
	want := "$JS.API.STREAM.INFO.KV_count $JS.API.STREAM.INFO.KV_count $KV.count.job $KV.count.job"
	if got := strings.Join(sent, " "); got != want {
		t.Errorf("run sent %s, want %s", got, want)
	}
}
