package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// golangMigrateTable is golang-migrate's default migrations table.
const golangMigrateTable = "schema_migrations"

// ToolNames are the GET_LOCK names migration tools take for database, each
// with the tool's name (dialects.Tool…):
//   - golang-migrate: GenerateAdvisoryLockId("database:schema_migrations")
//     in decimal (database/mysql/mysql.go);
//   - Flyway: "Flyway-" and Java's hashCode of
//     `database`.`flyway_schema_history` (MySQLNamedLockTemplate.java);
//   - Atlas: atlas_migrate_execute and atlas_migrate_diff, server-wide.
//
// goose takes no GET_LOCK. With no database only Atlas's names are known.
// Tools configured with another table take other names.
func ToolNames(database string) map[string]string {
	names := map[string]string{}
	for _, n := range dialects.AtlasLockNames {
		names[n] = dialects.ToolAtlas
	}
	if database == "" {
		return names
	}
	names[strconv.FormatUint(uint64(dialects.GolangMigrateLockID(database+":"+golangMigrateTable)), 10)] = dialects.ToolGolangMigrate
	flywayTable := quoteName(database) + "." + quoteName(dialects.FlywayHistoryTable)
	names["Flyway-"+strconv.Itoa(int(dialects.JavaStringHash(flywayTable)))] = dialects.ToolFlyway
	return names
}

// quoteName quotes a MySQL identifier with backticks.
func quoteName(s string) string {
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}

var _ sqlkit.SessionKeyFinder = (*LockAdmin)(nil)

// SessionLockByKey returns the connection holding the GET_LOCK lock whose
// name as the server stores it is key (another tool's lock, or the mapped
// name of a schedlock lock), from IS_USED_LOCK.
func (a *LockAdmin) SessionLockByKey(ctx context.Context, key string) (dialects.LockEntry, bool, error) {
	if err := dialects.CheckName(key); err != nil {
		return dialects.LockEntry{}, false, dialects.Wrap(Name, "find session lock", err)
	}
	var (
		id         sql.NullInt64
		user, host string
		dbNow      sql.NullInt64
	)
	if err := a.DB.QueryRowContext(ctx, isUsedLockSQL, key).Scan(&id, &user, &host, &dbNow); err != nil {
		return dialects.LockEntry{}, false, dialects.Wrap(Name, "find session lock", fmt.Errorf("IS_USED_LOCK: %w", err))
	}
	if !id.Valid {
		return dialects.LockEntry{}, false, nil
	}
	name := a.lockNameOf(key, nil)
	return dialects.LockEntry{
		Name: name, Key: key, Tool: ToolNames(a.Database)[key],
		State: dialects.StateHeld, Strategy: dialects.StrategySession, Source: SourceIsUsedLock,
		DBNow:  sqlkit.NullMillis(dbNow),
		Holder: &dialects.Holder{SessionID: strconv.FormatInt(id.Int64, 10), User: user, Client: host, Application: a.programName(ctx, id.Int64)},
	}, true, nil
}

var _ sqlkit.KnownLockFinder = (*LockAdmin)(nil)

// KnownSessionLocks returns the held locks among the migration tools'
// names for this database (ToolNames), one IS_USED_LOCK each, in name
// order; locks ls shows them where the server cannot list its locks.
func (a *LockAdmin) KnownSessionLocks(ctx context.Context) ([]dialects.LockEntry, error) {
	names := make([]string, 0, 4)
	for n := range ToolNames(a.Database) {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []dialects.LockEntry
	for _, n := range names {
		e, held, err := a.SessionLockByKey(ctx, n)
		if err != nil {
			return nil, err
		}
		if held {
			out = append(out, e)
		}
	}
	return out, nil
}
