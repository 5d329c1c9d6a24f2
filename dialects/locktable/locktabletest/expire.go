package locktabletest

import (
	"errors"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// CheckExpire proves, through tl (a lease locker whose table exists, any
// preset), what a forced unlock means: Expire of a live lease reports true and ends it (its
// holder's refresh then finds it lost, and another owner takes the lock);
// Expire of a lease already ended, or of a name never held, reports false;
// Expire of one name leaves another name's lease alone.
func CheckExpire(t *testing.T, tl dialects.LeaseLocker) {
	t.Helper()
	ctx := t.Context()
	first, err := tl.Acquire(ctx, "forced", dialects.Options{Owner: "a", AtMost: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if expired, err := tl.Expire(ctx, "forced"); err != nil || !expired {
		t.Fatalf("Expire of a live lease = %v, %v; want true", expired, err)
	}
	if err := first.Refresh(ctx); !errors.Is(err, dialects.ErrLeaseLost) {
		t.Errorf("refresh after a forced expiry: %v; want ErrLeaseLost", err)
	}
	if expired, err := tl.Expire(ctx, "forced"); err != nil || expired {
		t.Errorf("Expire of an ended lease = %v, %v; want false", expired, err)
	}
	second, err := tl.Acquire(ctx, "forced", dialects.Options{Owner: "b", AtMost: time.Minute})
	if err != nil {
		t.Fatalf("acquire after a forced expiry: %v", err)
	}
	if expired, err := tl.Expire(ctx, "never-held"); err != nil || expired {
		t.Errorf("Expire of a name never held = %v, %v; want false", expired, err)
	}
	if err := second.Refresh(ctx); err != nil {
		t.Errorf("refresh of the new holder after an Expire of another name: %v", err)
	}
	if err := second.Release(ctx); err != nil {
		t.Errorf("release of the new holder: %v", err)
	}
}
