//go:build unix

package cmd

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/zookeeper"
	"github.com/schedlock/schedlock/internal/livetest"
)

// locks ls, unlock and selfcheck on ZooKeeper, through the command line:
// a name with "/" is listed by name with its node as key; unlock by the
// wrong owner is refused and the holder keeps its lock; unlock by the
// owner ends the holder's lease at once; selfcheck passes.
func TestZooKeeperAdmin(t *testing.T) {
	raw := livetest.DSN(t, livetest.ZooKeeper)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := zookeeper.Open(ctx, raw)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	table := checks.NewPrefix()
	tl, err := b.LeaseLocker(dialects.Table{Name: table})
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.(dialects.TableCreator).CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tl.(dialects.TableDropper).DropTable(context.Background()) })
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("x-table", table)
	u.RawQuery = q.Encode()
	dsn := u.String()

	held := acquireT(t, tl, "jobs/nightly", "host-a")
	got := memoryLocks(t, "--dsn", dsn)
	if len(got) != 1 || got[0].Name != "jobs/nightly" || got[0].Owner != "host-a" || got[0].State != "held" || got[0].Token == nil {
		t.Fatalf("locks ls: %+v", got)
	}
	r := runCmd(t, false, nil, "locks", "ls", "--dsn", dsn)
	if !strings.Contains(r.stdout, "jobs%2Fnightly") {
		t.Errorf("locks ls does not show the node as key:\n%s", r.stdout)
	}

	r = runCmd(t, false, nil, "unlock", "jobs/nightly", "--dsn", dsn, "--owner", "host-b", "--yes")
	if ExitCode(r.err) != CodeNegative {
		t.Fatalf("unlock --owner host-b: %v", r.err)
	}
	if err := held.Refresh(ctx); err != nil {
		t.Fatalf("the holder lost its lock to a refused unlock: %v", err)
	}
	r = runCmd(t, false, nil, "unlock", "jobs/nightly", "--dsn", dsn, "--owner", "host-a", "--yes")
	if r.err != nil {
		t.Fatalf("unlock --owner host-a: %v\n%s", r.err, r.stderr)
	}
	select {
	case <-held.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the holder was not told of the unlock")
	}
	if got := memoryLocks(t, "--dsn", dsn); len(got) != 0 {
		t.Errorf("after unlock: %+v", got)
	}

	r = runCmd(t, false, nil, "selfcheck", "--dsn", raw)
	if r.err != nil {
		t.Fatalf("selfcheck: %v\n%s%s", r.err, r.stdout, r.stderr)
	}
}

// TestZooKeeperTableACLIsAMissingPrivilege: a lock table node whose ACL
// refuses this session (made by a digest user, creator-only) under a
// chroot it may read: detect reports the missing privilege on the table
// and does not claim the listing, where it said none was missing.
func TestZooKeeperTableACLIsAMissingPrivilege(t *testing.T) {
	onEachStore(t, []string{"zookeeper"}, testZooKeeperTableACL)
}

func testZooKeeperTableACL(t *testing.T, _, raw string) {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	prefix := checks.NewPrefix()
	chroot := u.Path + "/" + prefix
	open := "zk://" + u.Host + chroot
	owned := "zk://app:pw@" + u.Host + chroot
	// The chroot by an anonymous session (open to all), the default table
	// under it by the digest user (its creator alone may use it).
	for _, dsn := range []string{open + "?x-table=other", owned} {
		if r := runCmd(t, false, nil, "run", "--dsn", dsn, "--create-table", "--name", "setup", "--", "true"); r.err != nil {
			t.Fatalf("run --create-table on %s: %v\n%s", dsn, r.err, r.stderr)
		}
	}
	t.Cleanup(func() {
		// The digest user's table first (only it may delete in it), then
		// the chroot, from the live DSN's own chroot.
		for _, drop := range []struct{ dsn, table string }{{owned, "schedlock"}, {raw, prefix}} {
			b, err := zookeeper.Open(context.Background(), drop.dsn)
			if err != nil {
				continue
			}
			if tl, err := b.LeaseLocker(dialects.Table{Name: drop.table}); err == nil {
				_ = tl.(dialects.TableDropper).DropTable(context.Background())
			}
			_ = b.Close()
		}
	})
	missing := detectMissingPrivileges(t, open)
	if len(missing) == 0 || !strings.Contains(missing[0].Privilege, chroot+"/schedlock") {
		t.Errorf("detect: missing privileges %+v, want one on %s/schedlock", missing, chroot)
	}
	if l := detectCapability(t, open, "lock_listing"); l.Status == "yes" {
		t.Errorf("detect: lock_listing %+v, want it not proved", l)
	}
}
