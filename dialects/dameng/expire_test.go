package dameng

import (
	"errors"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// TestExpireSimulated: Expire ends a live lease (its holder's refresh then
// finds it lost, and another owner takes the lock) and reports false for
// a lease already ended, on every preset table.
func TestExpireSimulated(t *testing.T) {
	for _, preset := range dialects.Presets() {
		t.Run(preset, func(t *testing.T) {
			sim, db := openSim(t, configDM8())
			ctx := testCtx(t)
			tl, err := db.TableLocker(dialects.Table{Preset: preset})
			if err != nil {
				t.Fatal(err)
			}
			if err := tl.CreateTable(ctx); err != nil {
				t.Fatal(err)
			}
			first, err := tl.Acquire(ctx, "job", dialects.Options{Owner: "a", AtMost: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			expirer := tl
			if expired, err := expirer.Expire(ctx, "job"); err != nil || !expired {
				t.Fatalf("Expire of a live lease = %v, %v; want true", expired, err)
			}
			if err := first.Refresh(ctx); !errors.Is(err, dialects.ErrLeaseLost) {
				t.Errorf("refresh after a forced expiry: %v; want ErrLeaseLost", err)
			}
			if expired, err := expirer.Expire(ctx, "job"); err != nil || expired {
				t.Errorf("Expire of an ended lease = %v, %v; want false", expired, err)
			}
			if _, err := tl.Acquire(ctx, "job", dialects.Options{Owner: "b", AtMost: time.Minute}); err != nil {
				t.Errorf("acquire after a forced expiry: %v", err)
			}
			sim.AssertUnderstood(t)
		})
	}
}
