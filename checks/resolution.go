package checks

import "time"

// timeResolution is the resolution of tl's stored lease times: a second
// when the table's time columns keep whole seconds (its locker rounds the
// lease end up to the second and binds at-least a second longer), else 0.
func timeResolution(tl any) time.Duration {
	if w, ok := tl.(interface{ UntilWholeSeconds() bool }); ok && w.UntilWholeSeconds() {
		return time.Second
	}
	return 0
}
