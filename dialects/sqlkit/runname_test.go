package sqlkit

import (
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

// keyedAdmin is a dialects.LockAdmin whose session locks have the key "k:" + name.
type keyedAdmin struct{ dialects.LockAdmin }

func (keyedAdmin) LockKey(name string) string { return "k:" + name }

func TestNameRunLocks(t *testing.T) {
	held := func(key, app, name string) dialects.LockEntry {
		return dialects.LockEntry{Name: name, Key: key, Holder: &dialects.Holder{Application: app}}
	}
	entries := []dialects.LockEntry{
		held("k:nightly", RunApplication("nightly"), ""),             // named from its holder
		held("k:staging::sync", RunApplication("staging::sync"), ""), // stored name with its namespace
		held("k:a-long-name", RunApplication("a-long-na"), ""),       // application name cut short
		held("k:other", RunApplication("nightly"), ""),               // holds a key not of that name
		held("k:billing", "billing-app", ""),                         // not schedlock run
		held("k:known", RunApplication("nightly"), "known"),          // named already
		{Key: "k:x"},                       // no holder known
		held("k:", RunApplication(""), ""), // an empty name is no name
	}
	want := []string{"nightly", "staging::sync", "", "", "", "known", "", ""}
	nameRunLocks(keyedAdmin{}, entries)
	for i, e := range entries {
		if e.Name != want[i] {
			t.Errorf("entry %d (key %s): name %q, want %q", i, e.Key, e.Name, want[i])
		}
	}
	// An admin without keys names nothing.
	plain := []dialects.LockEntry{held("k:nightly", RunApplication("nightly"), "")}
	nameRunLocks(nil, plain)
	if plain[0].Name != "" {
		t.Errorf("named %q without a keyer", plain[0].Name)
	}
}
