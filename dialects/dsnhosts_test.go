package dialects_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

func TestSplitStoreURL(t *testing.T) {
	for _, tc := range []struct {
		rest                    string
		user, pass, path, query string
		hasPass                 bool
		hosts                   []string
	}{
		{rest: "", hosts: []string{"localhost:2379"}},
		{rest: "a,b:1,[::1],[::1]:9/p/q?x=1&y=2", hosts: []string{"a:2379", "b:1", "[::1]:2379", "[::1]:9"}, path: "p/q", query: "x=1&y=2"},
		{rest: "us%2Fer:p%40ss:w@rd@h", user: "us/er", pass: "p@ss:w@rd", hasPass: true, hosts: []string{"h:2379"}},
		{rest: "u:p@ss@h:1/", user: "u", pass: "p@ss", hasPass: true, hosts: []string{"h:1"}},
		{rest: "u@h", user: "u", hosts: []string{"h:2379"}},
	} {
		u, err := dialects.SplitStoreURL(tc.rest)
		if err != nil {
			t.Errorf("%q: %v", tc.rest, err)
			continue
		}
		if u.User != tc.user || u.Pass != tc.pass || u.HasPass != tc.hasPass || u.Path != tc.path || u.Query != tc.query || !slices.Equal(u.HostPorts("2379"), tc.hosts) {
			t.Errorf("%q: %+v hosts %v", tc.rest, u, u.HostPorts("2379"))
		}
	}
	for _, rest := range []string{"u%zz:p@h", "u:p%zz@h"} {
		if _, err := dialects.SplitStoreURL(rest); !errors.Is(err, dialects.ErrInvalid) {
			t.Errorf("%q: %v, want an Invalid error", rest, err)
		}
	}
}
