package mongodb_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/mongodb"
	"github.com/schedlock/schedlock/dialects/mongodb/mongotest"
	"github.com/schedlock/schedlock/internal/livetest"
)

// TestDeploymentAndCredentials runs a FerretDB of the test's own that
// calls itself a one-member replica set and requires a login: detect
// reads the replica set, its single member, the DSN's write and read
// concern; a wrong password is refused in one line that names the hosts
// and not the password.
func TestDeploymentAndCredentials(t *testing.T) {
	livetest.DSN(t, livetest.MongoDB)
	f := mongotest.StartFerretDB(t, "--repl-set-name=rs0", "--test-enable-new-auth",
		"--setup-database=admin", "--setup-username=admin", "--setup-password=s3cr3t-pw")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var b *mongodb.Backend
	var err error
	for i := 0; i < 50; i++ { // the setup user is created just after FerretDB listens
		b, err = mongodb.Open(ctx, "mongodb://admin:s3cr3t-pw@"+f.Addr()+"/jobs?authSource=admin&w=1&readConcernLevel=local")
		if err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	facts := b.Facts()
	if facts.Topology != mongodb.TopologyReplicaSet || facts.SetName != "rs0" || facts.Members != 1 || facts.WriteConcern != "1" || facts.ReadConcern != "local" || facts.FerretDB != mongotest.FerretDBVersion {
		t.Errorf("facts %+v", facts)
	}
	var ids []string
	for _, r := range b.Risks() {
		ids = append(ids, r.ID)
	}
	if got := strings.Join(ids, " "); got != dialects.RiskNonAtomicUpdates+" single-member read-concern" {
		t.Errorf("risks %q", got)
	}
	_, err = mongodb.Open(ctx, "mongodb://admin:wrong-pw@"+f.Addr()+"/jobs?authSource=admin")
	var u *dialects.UnreachableError
	if !errors.As(err, &u) || strings.Contains(err.Error(), "wrong-pw") || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), f.Addr()) {
		t.Errorf("open with a wrong password: %v; want one line, an *UnreachableError naming the host, without the password", err)
	}
}
