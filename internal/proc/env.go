package proc

import "strings"

// withoutVars returns environ without the variables named in unset.
func withoutVars(environ, unset []string) []string {
	if len(unset) == 0 {
		return environ
	}
	out := make([]string, 0, len(environ))
next:
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		for _, u := range unset {
			if name == u {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}
