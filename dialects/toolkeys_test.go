package dialects

import (
	"hash/crc32"
	"testing"
)

// The expected values are the ones the tools' own sources give (see
// golang-migrate database/util.go, goose lock/session_locker_options.go,
// Atlas sql/postgres/driver.go).
func TestGolangMigrateLockID(t *testing.T) {
	cases := []struct {
		db    string
		extra []string
		want  uint32
	}{
		{"admintest", []string{"public", "schema_migrations"}, 3888200822},
		{"test", []string{"public", "schema_migrations"}, 2151868736},
		{"admintest:schema_migrations", nil, 2851680549},
	}
	for _, c := range cases {
		if got := GolangMigrateLockID(c.db, c.extra...); got != c.want {
			t.Errorf("GolangMigrateLockID(%q, %q) = %d, want %d", c.db, c.extra, got, c.want)
		}
	}
}

func TestGolangMigrateLockIDKeepsArguments(t *testing.T) {
	extra := make([]string, 2, 8)
	extra[0], extra[1] = "a", "b"
	GolangMigrateLockID("db", extra...)
	if got := extra[:3][2]; got != "" {
		t.Fatalf("GolangMigrateLockID wrote %q into the caller's slice", got)
	}
}

func TestGooseLockIDIsCRC32OfGoose(t *testing.T) {
	if got := int64(crc32.ChecksumIEEE([]byte("goose"))); got != GooseLockID {
		t.Fatalf("crc32(goose) = %d, GooseLockID = %d", got, GooseLockID)
	}
}

func TestAtlasLockID(t *testing.T) {
	if got := AtlasLockID("atlas_migrate_execute"); got != 2686470616 {
		t.Fatalf("AtlasLockID(atlas_migrate_execute) = %d, want 2686470616", got)
	}
}

func TestJavaStringHash(t *testing.T) {
	cases := map[string]int32{
		"":                                    0,
		"a":                                   97,
		"ab":                                  97*31 + 98,
		"é":                                   0xe9,
		"😀":                                   55357*31 + 56832, // two UTF-16 code units
		"`admintest`.`flyway_schema_history`": 1519089272,
		// Flyway's PostgreSQL key for schema public minus its magic number.
		`"public"."flyway_schema_history"`: int32(77433833903597 - 0x466C79776179),
	}
	for s, want := range cases {
		if got := JavaStringHash(s); got != want {
			t.Errorf("JavaStringHash(%q) = %d, want %d", s, got, want)
		}
	}
}
