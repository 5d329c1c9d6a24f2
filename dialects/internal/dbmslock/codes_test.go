package dbmslock

import (
	"errors"
	"testing"
)

func TestRequestResult(t *testing.T) {
	tests := []struct {
		rc      int64
		got     bool
		errCode int64 // 0: no error
	}{
		{LockSuccess, true, 0},
		{LockTimeout, false, 0},
		{LockDeadlock, false, LockDeadlock},
		{LockParameterErr, false, LockParameterErr},
		{LockAlreadyOwned, true, 0},
		{LockIllegalLock, false, LockIllegalLock},
		{6, false, 6},
		{-1, false, -1},
	}
	for _, tt := range tests {
		got, err := RequestResult(tt.rc)
		checkMapping(t, "REQUEST", tt.rc, got, err, tt.got, tt.errCode)
	}
}

func TestReleaseResult(t *testing.T) {
	tests := []struct {
		rc      int64
		got     bool
		errCode int64
	}{
		{LockSuccess, true, 0},
		{LockAlreadyOwned, false, 0},
		{LockParameterErr, false, LockParameterErr},
		{LockIllegalLock, false, LockIllegalLock},
		{LockTimeout, false, LockTimeout},
		{LockDeadlock, false, LockDeadlock},
	}
	for _, tt := range tests {
		got, err := ReleaseResult(tt.rc)
		checkMapping(t, "RELEASE", tt.rc, got, err, tt.got, tt.errCode)
	}
}

func TestHoldsResult(t *testing.T) {
	tests := []struct {
		rc      int64
		got     bool
		errCode int64
	}{
		{LockAlreadyOwned, true, 0},
		{LockSuccess, false, 0},
		{LockTimeout, false, 0},
		{LockDeadlock, false, LockDeadlock},
		{LockParameterErr, false, LockParameterErr},
		{LockIllegalLock, false, LockIllegalLock},
	}
	for _, tt := range tests {
		got, err := HoldsResult(tt.rc)
		checkMapping(t, "REQUEST", tt.rc, got, err, tt.got, tt.errCode)
	}
}

func checkMapping(t *testing.T, call string, rc int64, got bool, err error, want bool, wantCode int64) {
	t.Helper()
	if wantCode == 0 {
		if err != nil || got != want {
			t.Errorf("%s %d: got %v, %v; want %v, nil", call, rc, got, err, want)
		}
		return
	}
	var le *Error
	if !errors.As(err, &le) || le.Code != wantCode || le.Call != call || got {
		t.Errorf("%s %d: got %v, %v; want a *Error with code %d", call, rc, got, err, wantCode)
	}
}
