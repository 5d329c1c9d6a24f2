package cmd

import (
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects/mongodb/mongotest"
	"github.com/schedlock/schedlock/internal/livetest"
)

// What `schedlock run -- true` sends to a MongoDB server, counted by the
// serializing proxy from the commands it forwards, on a collection that
// exists: hello (topology and the server's clock) and buildInfo (its
// version), listCollections (the collection is there: the acquire's
// upsert would create it), the acquire's findAndModify, the release's
// update, and the driver's endSessions as it disconnects. The driver's
// connection handshakes are not OP_MSG commands and do not show.
func TestMongoDBRunCommands(t *testing.T) {
	live := livetest.DSN(t, livetest.MongoDB)
	p, err := mongotest.Start(hostOf(live))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	dsn := dropAtEnd(t, "mongodb://"+p.Addr()+"/"+ownDatabase())
	createCollection(t, dsn)
	p.Commands()
	if r := runCmd(t, false, nil, "run", "--dsn", dsn, "--name", "count", "--", "true"); r.err != nil {
		t.Fatalf("run: %v\n%s", r.err, r.stderr)
	}
	want := "hello buildInfo listCollections findAndModify update endSessions"
	if got := strings.Join(p.Commands(), " "); got != want {
		t.Errorf("run sent %s, want %s", got, want)
	}
}
