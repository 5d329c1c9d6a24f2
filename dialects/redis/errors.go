package redis

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"strings"

	"github.com/schedlock/schedlock/dialects"
)

// classify turns a go-redis error of Open into the kit's: a server that
// cannot be reached or refuses the login is a *dialects.UnreachableError
// (the DSN layer words it with the address and connectHint).
func classify(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) && !isNetwork(err) {
		return dialects.Wrap(Name, "open", err)
	}
	if isNetwork(err) || isAuth(err) || isTLS(err) || errors.Is(err, errPlaintext) || errors.Is(err, errSilent) {
		return dialects.Unreachable(err)
	}
	return dialects.Wrap(Name, "open", explain(err))
}

// aclUser and aclKeys stand for the ACL user and the lock keys' pattern
// in the fix of a refused command or key, until aclFix writes them in.
const aclUser, aclKeys = "<user>", "~<keys>"

// noPermission is the missing privilege of a NOPERM answer: a key outside
// the ACL user's key patterns, or a command it may not run (named by
// Redis: "no permissions to run the 'script|load' command").
func noPermission(err error) *dialects.PrivilegeError {
	msg := err.Error()
	if strings.Contains(msg, "permissions to access") && strings.Contains(msg, "key") {
		return &dialects.PrivilegeError{Privilege: "access to the lock keys (outside the ACL user's key patterns)", Grant: "ACL SETUSER " + aclUser + " " + aclKeys, Err: err}
	}
	command := "a command the locks need"
	if _, rest, ok := strings.Cut(msg, "run the '"); ok {
		if c, _, ok := strings.Cut(rest, "'"); ok {
			command = "the " + strings.ToUpper(strings.ReplaceAll(c, "|", " ")) + " command"
		}
	}
	return &dialects.PrivilegeError{Privilege: command + " (Redis: " + msg + ")", Grant: "ACL SETUSER " + aclUser + " +@scripting +scan +info +time", Err: err}
}

// aclFix writes user (the backend's ACL user; "": default) and keys (an
// ACL key pattern, "~schedlock:*") into the fix of a missing privilege
// that noPermission made.
func aclFix(err error, user, keys string) error {
	var pe *dialects.PrivilegeError
	if errors.As(err, &pe) && strings.HasPrefix(pe.Grant, "ACL SETUSER "+aclUser) {
		pe.Grant = strings.NewReplacer(aclUser, aclUserName(user), aclKeys, keys).Replace(pe.Grant)
	}
	return err
}

// aclUserName is user as ACL SETUSER names it: "default" for none.
func aclUserName(user string) string {
	if user == "" {
		return "default"
	}
	return user
}

// isNoPermission reports a command or key the ACL user may not use.
func isNoPermission(err error) bool {
	return strings.HasPrefix(err.Error(), "NOPERM") || strings.Contains(err.Error(), ": NOPERM")
}

// isTimeout reports a dial or read that ran out of time.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// isDial reports an error of the dial itself, before any answer.
func isDial(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "dial"
}

// isNetwork reports a connection that could not be made or was cut.
func isNetwork(err error) bool {
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &ne) || errors.As(err, &oe) || strings.Contains(err.Error(), "connection refused") ||
		errors.Is(err, errClosed) || strings.Contains(err.Error(), "EOF")
}

// isTLS reports a TLS handshake that failed: the server's certificate not
// verified, or the server refusing the client's (or its absence).
func isTLS(err error) bool {
	var verify *tls.CertificateVerificationError
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	return errors.As(err, &verify) || errors.As(err, &unknown) || errors.As(err, &host) ||
		strings.Contains(err.Error(), "remote error: tls:")
}

// isAuth reports a refused login (NOAUTH, WRONGPASS, a user without
// rights to AUTH).
func isAuth(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "NOAUTH") || strings.HasPrefix(msg, "WRONGPASS") ||
		strings.Contains(msg, "invalid password") || strings.Contains(msg, "invalid username-password")
}

// connectHint says what to check when connecting failed with err.
func connectHint(err error) string {
	switch {
	case err == nil:
		return ""
	case strings.HasPrefix(err.Error(), "NOAUTH"):
		return "this Redis requires a password: give it in the URL, redis://:PASSWORD@host:6379/0 (or user:PASSWORD@ with ACLs)"
	case isAuth(err):
		return "the user or password in the URL is wrong, or the ACL user may not log in"
	case dialects.ClientCertRefused(err):
		return "this Redis asks for a client certificate its CA signed: add cert=/path/client.pem&key=/path/client-key.pem to the rediss:// URL"
	case errors.Is(err, errNoReply):
		return "a TLS-only port does this: use rediss:// (or the server's plain port); else the server may be at its maxclients"
	case errors.Is(err, errSilent):
		return "is a Redis server listening there, and is it its TLS port (tls-port)? If it is only slow, raise dial_timeout= in the URL"
	case errors.Is(err, errPlaintext):
		return "this port speaks Redis without TLS: use redis://, or the port of the server's TLS listener (tls-port)"
	case isTLS(err):
		return "the server's certificate is not trusted here: name its CA in the rediss:// URL (cacert=/path/ca.pem), and connect by a name or address the certificate holds"
	case isTimeout(err) && isDial(err):
		return "the host did not take the connection: is it reachable, and is the port right? If it is only slow, raise dial_timeout= in the URL"
	case isTimeout(err):
		return "the server took the connection but did not answer: is a Redis server listening there? If it is only slow, raise read_timeout= (and dial_timeout=) in the URL"
	}
	return ""
}

// explain words the server errors a lock operation can meet: a replica
// (READONLY), a Cluster node answering for slots it does not serve
// (MOVED, ASK, CLUSTERDOWN), a command the ACL user may not run, and a
// database number the server does not have.
func explain(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "READONLY"):
		return unsupportedf("this Redis server is a read-only replica: connect to the master (%v)", err)
	case strings.HasPrefix(msg, "MOVED"), strings.HasPrefix(msg, "ASK "):
		return unsupportedf("this Redis is a Cluster and the node answered %q: name several cluster nodes in the URL (redis://h1:6379,h2:6379,h3:6379)", msg)
	case strings.HasPrefix(msg, "CLUSTERDOWN"):
		return unsupportedf("the Redis Cluster is down or not all of its slots are served (%v)", err)
	case strings.HasPrefix(msg, "NOPERM"):
		return noPermission(err)
	case strings.Contains(msg, "DB index is out of range"):
		return unsupportedf("this Redis has no database of the URL's number: name one below its databases setting (16 by default) in redis://host:6379/N (%v)", err)
	case strings.Contains(msg, "SELECT is not allowed in cluster mode"):
		return unsupportedf("a Redis Cluster has database 0 only: drop the database number from the URL (%v)", err)
	case strings.HasPrefix(msg, "OOM"):
		return unsupportedf("this Redis is out of memory and refuses writes (%v)", err)
	}
	return err
}

// unavailableError is a failed try that a later one may not meet: Redis
// could not be reached or could not serve the write for now. A waiting
// Acquire tries again.
type unavailableError struct{ error }

func (e unavailableError) Unwrap() error { return e.error }

// unavailable reports whether err says Redis may serve the next try: the
// connection was cut or refused, the server is loading its data, a
// Cluster is failing over (CLUSTERDOWN, TRYAGAIN), a replica lost its
// master (MASTERDOWN), or — through a Sentinel, whose master is being
// switched — the server became a replica (READONLY). The caller's own
// context ending, a closed backend and every other answer are final.
func (b *Backend) unavailable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, errClosed) {
		return false
	}
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "LOADING"), strings.HasPrefix(msg, "MASTERDOWN"),
		strings.HasPrefix(msg, "CLUSTERDOWN"), strings.HasPrefix(msg, "TRYAGAIN"):
		return true
	case strings.HasPrefix(msg, "READONLY"):
		return b.cfg.failover != nil
	}
	return isNetwork(err)
}
