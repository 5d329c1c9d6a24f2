package etcd

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestUnavailableIsWhatAnElectionOrOutageAnswers(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("acquire: %w", rpctypes.ErrNoLeader), true},
		{rpctypes.ErrLeaderChanged, true},
		{rpctypes.ErrTimeoutDueToLeaderFail, true},
		{status.Error(codes.Unavailable, "connection refused"), true},
		{context.Canceled, false},
		{fmt.Errorf("acquire: %w", context.DeadlineExceeded), false},
		{rpctypes.ErrPermissionDenied, false},
		{errors.New("etcdserver: request is too large"), false},
	} {
		if got := unavailable(c.err); got != c.want {
			t.Errorf("unavailable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
