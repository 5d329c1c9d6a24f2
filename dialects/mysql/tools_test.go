package mysql

import (
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

// The names the tools take for database admintest, as their sources
// derive them (see dialects/toolkeys.go).
func TestToolNamesMatchTheTools(t *testing.T) {
	names := ToolNames("admintest")
	want := map[string]string{
		"2851680549":            dialects.ToolGolangMigrate,
		"Flyway-1519089272":     dialects.ToolFlyway,
		"atlas_migrate_execute": dialects.ToolAtlas,
		"atlas_migrate_diff":    dialects.ToolAtlas,
	}
	for name, tool := range want {
		if names[name] != tool {
			t.Errorf("name %q: tool %q, want %q (names %v)", name, names[name], tool, names)
		}
	}
	if len(names) != len(want) {
		t.Errorf("got %v, want %v", names, want)
	}
}

func TestToolNamesWithoutDatabase(t *testing.T) {
	names := ToolNames("")
	if len(names) != 2 || names["atlas_migrate_execute"] != dialects.ToolAtlas {
		t.Fatalf("without a database only Atlas's names are known: %v", names)
	}
}

func TestToolNamesFollowTheDatabase(t *testing.T) {
	if tool := ToolNames("test")["2851680549"]; tool != "" {
		t.Fatalf("admintest's golang-migrate name is labelled %q on database test", tool)
	}
}
