package etcd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/schedlock/schedlock/dialects"
)

// denied is err, or when etcd refused it for the user's roles (permission
// denied) the missing privilege — read and write on the lock space — with
// the etcdctl command that grants it.
func (b *Backend) denied(err error) error {
	if err == nil || !isPermissionDenied(err) {
		return err
	}
	return &dialects.PrivilegeError{Privilege: b.lockSpacePrivilege(), Grant: b.lockSpaceGrant(), Err: err}
}

func isPermissionDenied(err error) bool {
	return errors.Is(err, rpctypes.ErrPermissionDenied) || errors.Is(err, rpctypes.ErrGRPCPermissionDenied) ||
		status.Code(err) == codes.PermissionDenied
}

// lockSpacePrivilege names what every lock operation needs.
func (b *Backend) lockSpacePrivilege() string {
	return "read and write on the keys under " + quotePrefix(b.cfg.root)
}

// lockSpaceGrant is the etcdctl command that gives a role of the DSN's
// user read and write on the lock space.
func (b *Backend) lockSpaceGrant() string {
	prefix := b.cfg.root
	if prefix == "" || strings.ContainsAny(prefix, " '\"$`\\!*?[]{}();&|<>#~") {
		prefix = "'" + strings.ReplaceAll(prefix, "'", `'\''`) + "'"
	}
	return fmt.Sprintf("etcdctl role grant-permission ROLE --prefix=true readwrite %s (ROLE: a role of user %s)", prefix, firstNonEmpty(b.cfg.user, "root"))
}

// lockSpaceAccess checks, writing nothing, that the user may read and
// write the lock space: a transaction whose condition never holds (a
// version below zero) with a put in its branch, which etcd's
// authorisation checks all the same. It returns the missing privilege,
// or nil; an error only when ctx ended (another failure proves nothing
// about permissions, and the lock operations will report it).
func (b *Backend) lockSpaceAccess(ctx context.Context) (*dialects.MissingPrivilege, error) {
	key := b.cfg.root + "schedlock-probe"
	_, err := b.cli.Txn(ctx).If(clientv3.Compare(clientv3.Version(key), "<", 0)).Then(clientv3.OpPut(key, "")).Commit()
	switch {
	case err == nil:
		return nil, nil
	case isPermissionDenied(err):
		return &dialects.MissingPrivilege{Privilege: b.lockSpacePrivilege(), NeededFor: dialects.NeededForLocks, Grant: b.lockSpaceGrant()}, nil
	case ctx.Err() != nil:
		return nil, dialects.Wrap(Name, "probe", err)
	}
	return nil, nil
}
