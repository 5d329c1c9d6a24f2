package dbmslock

import (
	"testing"
	"time"
)

func TestWaitResult(t *testing.T) {
	tests := []struct {
		rc      int64
		got     bool
		errCode int64
	}{
		{LockSuccess, true, 0},
		{LockAlreadyOwned, true, 0},
		{LockTimeout, false, 0},
		{LockDeadlock, false, LockDeadlock},
		{LockParameterErr, false, LockParameterErr},
		{LockIllegalLock, false, LockIllegalLock},
		{7, false, 7},
	}
	for _, tt := range tests {
		got, err := WaitResult(tt.rc)
		checkMapping(t, "REQUEST", tt.rc, got, err, tt.got, tt.errCode)
	}
}

func TestTimeoutSeconds(t *testing.T) {
	for wait, want := range map[time.Duration]int64{
		time.Nanosecond:               1,
		400 * time.Millisecond:        1,
		time.Second:                   1,
		time.Second + time.Nanosecond: 2,
		2500 * time.Millisecond:       3,
		time.Hour:                     3600,
		(MaxWait - 1) * time.Second:   MaxWait - 1,
		MaxWait * time.Second:         MaxWait - 1,
		time.Duration(1<<63 - 1):      MaxWait - 1,
	} {
		if got := TimeoutSeconds(wait); got != want {
			t.Errorf("TimeoutSeconds(%s) = %d, want %d", wait, got, want)
		}
	}
}
