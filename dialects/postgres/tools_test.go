package postgres

import (
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

// The keys the tools take on database admintest, schema public, as their
// sources derive them (see dialects/toolkeys.go).
func TestToolKeysMatchTheTools(t *testing.T) {
	keys := ToolKeys("admintest", "public")
	want := map[int64]string{
		3888200822:     dialects.ToolGolangMigrate,
		4097083626:     dialects.ToolGoose,
		77433833903597: dialects.ToolFlyway,
		2686470616:     dialects.ToolAtlas,
	}
	for key, tool := range want {
		if keys[key] != tool {
			t.Errorf("key %d: tool %q, want %q (keys %v)", key, keys[key], tool, keys)
		}
	}
	if len(keys) != 5 {
		t.Errorf("got %d keys, want 5 (atlas has two): %v", len(keys), keys)
	}
}

func TestToolKeysFollowTheDatabase(t *testing.T) {
	if tool := ToolKeys("test", "public")[2151868736]; tool != dialects.ToolGolangMigrate {
		t.Fatalf("golang-migrate's key for database test: tool %q", tool)
	}
	if tool := ToolKeys("test", "public")[3888200822]; tool != "" {
		t.Fatalf("admintest's golang-migrate key is labelled %q on database test", tool)
	}
}
