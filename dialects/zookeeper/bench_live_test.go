package zookeeper

import (
	"testing"

	"github.com/schedlock/schedlock/dialects/benchops"
)

// The raw clients bench opens on one backend, one per contending worker,
// lock in one place: the second is refused while the first holds a name,
// and gets it once the first let it go. (Each had a parent node of its
// own, so the raw contention figure was of workers that never met.)
func TestRawClientsOfOneBackendExcludeEachOther(t *testing.T) {
	ctx, b := liveBackend(t)
	first, err := b.RawStoreOps(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	second, err := b.RawStoreOps(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	try := func(ops benchops.StoreOps) bool {
		t.Helper()
		ok, err := ops.TryLock(ctx, "shared")
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !try(first) {
		t.Fatal("the first raw client was refused a free name")
	}
	if try(second) {
		t.Error("the second raw client got the name the first holds")
	}
	if err := first.Unlock(ctx, "shared"); err != nil {
		t.Fatal(err)
	}
	if !try(second) {
		t.Error("the second raw client was refused the name the first let go")
	}
	if err := second.Unlock(ctx, "shared"); err != nil {
		t.Fatal(err)
	}
}
