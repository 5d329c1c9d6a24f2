package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"

	"github.com/schedlock/schedlock/dialects"
)

// flywayLockMagic is "Flyway" in ASCII as a number, the base of Flyway's
// PostgreSQL advisory keys (flyway-database-postgresql
// PostgreSQLAdvisoryLockTemplate.java).
const flywayLockMagic int64 = 0x466C79776179

// golangMigrateTable is golang-migrate's default migrations table.
const golangMigrateTable = "schema_migrations"

// ToolKeys are the bigint advisory keys migration tools take in database
// with current schema schema, each with the tool's name (dialects.Tool…):
//   - golang-migrate: GenerateAdvisoryLockId(database, schema,
//     "schema_migrations") (database/postgres/postgres.go);
//   - goose: its DefaultLockID;
//   - Flyway: 0x466C79776179 plus Java's hashCode of
//     "schema"."flyway_schema_history" (PostgreSQLConnection.lock);
//   - Atlas: FNV-1 of atlas_migrate_execute and atlas_migrate_diff.
//
// Tools configured with another table, schema or lock id take other keys.
func ToolKeys(database, schema string) map[int64]string {
	keys := map[int64]string{
		int64(dialects.GolangMigrateLockID(database, schema, golangMigrateTable)): dialects.ToolGolangMigrate,
		dialects.GooseLockID: dialects.ToolGoose,
		flywayLockMagic + int64(dialects.JavaStringHash(quoteIdent(schema)+"."+quoteIdent(dialects.FlywayHistoryTable))): dialects.ToolFlyway,
	}
	for _, n := range dialects.AtlasLockNames {
		keys[dialects.AtlasLockID(n)] = dialects.ToolAtlas
	}
	return keys
}

// currentScopeSQL reads what the tools' keys derive from.
const currentScopeSQL = `SELECT current_database()::text, COALESCE(current_schema()::text, '')`

// toolKeys reads the current database and schema and returns ToolKeys for
// them.
func (a *LockAdmin) toolKeys(ctx context.Context) (map[int64]string, error) {
	var database, schema sql.NullString
	if err := a.DB.QueryRowContext(ctx, currentScopeSQL).Scan(&database, &schema); err != nil {
		return nil, fmt.Errorf("read the current database and schema: %w", err)
	}
	return ToolKeys(database.String, schema.String), nil
}

// labelTools sets the Tool of the entries whose bigint key a migration tool
// takes here.
func (a *LockAdmin) labelTools(ctx context.Context, entries []dialects.LockEntry) error {
	if len(entries) == 0 {
		return nil
	}
	tools, err := a.toolKeys(ctx)
	if err != nil {
		return err
	}
	for i := range entries {
		if key, err := strconv.ParseInt(entries[i].Key, 10, 64); err == nil {
			entries[i].Tool = tools[key]
		}
	}
	return nil
}
