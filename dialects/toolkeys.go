package dialects

import (
	"hash/crc32"
	"hash/fnv"
	"strings"
	"unicode/utf16"
)

// Migration tools' session locks. locks ls names the advisory keys and
// GET_LOCK names these tools take (LockEntry.Tool), derived for the
// current database the way each tool derives them; each dialect computes
// its own from the helpers below.
const (
	ToolGolangMigrate = "golang-migrate"
	ToolGoose         = "goose"
	ToolFlyway        = "flyway"
	ToolAtlas         = "atlas"
)

// golangMigrateSalt is the multiplier of golang-migrate's advisory lock ids
// (golang-migrate/migrate database/util.go, advisoryLockIDSalt).
const golangMigrateSalt uint32 = 1486364155

// GolangMigrateLockID is golang-migrate's GenerateAdvisoryLockId:
// the CRC-32 (IEEE) of the names, joined with NUL and the database name
// last, times 1486364155, in uint32 arithmetic
// (golang-migrate/migrate database/util.go).
func GolangMigrateLockID(databaseName string, additionalNames ...string) uint32 {
	s := databaseName
	if len(additionalNames) > 0 {
		s = strings.Join(append(append([]string(nil), additionalNames...), databaseName), "\x00")
	}
	return crc32.ChecksumIEEE([]byte(s)) * golangMigrateSalt
}

// GooseLockID is goose's DefaultLockID, the CRC-32 (IEEE) of "goose"
// (pressly/goose lock/session_locker_options.go).
const GooseLockID int64 = 4097083626

// AtlasLockNames are the lock names Atlas's migrate commands take
// (ariga/atlas cmd/atlas/internal/cmdapi/migrate.go): migrate apply's, then
// migrate diff's.
var AtlasLockNames = []string{"atlas_migrate_execute", "atlas_migrate_diff"}

// AtlasLockID is the PostgreSQL advisory key Atlas takes for a lock name:
// its 32-bit FNV-1 hash (ariga/atlas sql/postgres/driver.go, fnv.New32).
func AtlasLockID(name string) int64 {
	h := fnv.New32()
	_, _ = h.Write([]byte(name))
	return int64(h.Sum32())
}

// FlywayHistoryTable is the default table Flyway's lock names derive from.
const FlywayHistoryTable = "flyway_schema_history"

// JavaStringHash is Java's String.hashCode: s*31^(n-1) + … over its UTF-16
// code units, in int32 arithmetic. Flyway derives its lock names from it.
func JavaStringHash(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}
