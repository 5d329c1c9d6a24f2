package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/schedlock/schedlock/dialects"
)

// Server error numbers KILL answers with.
const (
	errNoSuchThread         = 1094 // ER_NO_SUCH_THREAD
	errKillDenied           = 1095 // ER_KILL_DENIED_ERROR: "You are not owner of thread"
	errSpecificAccessDenied = 1227 // ER_SPECIFIC_ACCESS_DENIED_ERROR
)

// Kill terminates the session whose connection id Holder returned, with
// KILL <id>; its GET_LOCK locks are freed. KILL takes no placeholder, so the
// id must be a positive integer and is formatted, never spliced as text. A
// refusal for lack of privilege is a *dialects.PrivilegeError naming the
// privilege (MySQL 8: CONNECTION_ADMIN; MariaDB 10.5.2+: CONNECTION ADMIN;
// older servers: SUPER) and the GRANT that fixes it.
func (o *SessionOps) kill(ctx context.Context, db *sql.DB, sessionID string) error {
	id, err := strconv.ParseUint(strings.TrimSpace(sessionID), 10, 64)
	if err != nil || id == 0 {
		return dialects.Wrap(Name, "kill", dialects.Invalidf("session id %q is not a positive integer", sessionID))
	}
	_, err = db.ExecContext(ctx, "KILL "+strconv.FormatUint(id, 10))
	if err == nil {
		return nil
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) && (me.Number == errKillDenied || me.Number == errSpecificAccessDenied) {
		return dialects.Wrap(Name, "kill", o.privilegeError(ctx, db, err))
	}
	if errors.As(err, &me) && me.Number == errNoSuchThread {
		return dialects.Wrap(Name, "kill", fmt.Errorf("session %d no longer exists: %w", id, err))
	}
	return dialects.Wrap(Name, "kill", fmt.Errorf("KILL %d: %w", id, err))
}

// privilegeError names the privilege that lets the current user kill other
// users' sessions on this server.
func (o *SessionOps) privilegeError(ctx context.Context, db *sql.DB, cause error) error {
	privilege := "SUPER"
	switch {
	case o.Info.Product == dialects.ProductMariaDB && versionAtLeast(o.Info.Version, 10, 5, 2):
		privilege = "CONNECTION ADMIN"
	case o.Info.Product == dialects.ProductMySQL && versionAtLeast(o.Info.Version, 8, 0):
		privilege = "CONNECTION_ADMIN"
	}
	return &dialects.PrivilegeError{
		Privilege: privilege,
		Grant:     "GRANT " + privilege + " ON *.* TO " + currentUser(ctx, db),
		Err:       cause,
	}
}

// currentUser returns CURRENT_USER() quoted for a GRANT ('app'@'%'), or a
// placeholder when it cannot be read.
func currentUser(ctx context.Context, db *sql.DB) string {
	var user string
	if err := db.QueryRowContext(ctx, "SELECT CURRENT_USER()").Scan(&user); err != nil || user == "" {
		return "'<user>'@'<host>'"
	}
	name, host := user, "%"
	if i := strings.LastIndexByte(user, '@'); i >= 0 {
		name, host = user[:i], user[i+1:]
	}
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	return quote(name) + "@" + quote(host)
}
