package postgres

import (
	"strconv"
	"strings"
)

// versionAtLeast reports whether the dotted version v ("2025.1.0.0",
// "v24.3.0", "15.20") is at least want (2025, 1). Parsing stops at the first
// part that does not start with a digit; missing parts count as 0, and a
// version with no number at all is below everything.
func versionAtLeast(v string, want ...int) bool {
	got := versionParts(v)
	if len(got) == 0 {
		return false
	}
	for i, w := range want {
		g := 0
		if i < len(got) {
			g = got[i]
		}
		if g != w {
			return g > w
		}
	}
	return true
}

func versionParts(v string) []int {
	var parts []int
	for _, p := range strings.Split(strings.TrimPrefix(v, "v"), ".") {
		end := 0
		for end < len(p) && p[end] >= '0' && p[end] <= '9' {
			end++
		}
		n, err := strconv.Atoi(p[:end])
		if err != nil {
			break
		}
		parts = append(parts, n)
		if end < len(p) {
			break
		}
	}
	return parts
}
