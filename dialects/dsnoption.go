package dialects

import (
	"time"

	"github.com/schedlock/schedlock/internal/duration"
)

// PositiveDuration reads the value v of the DSN option key as a duration
// (Go's 90s or ISO 8601's PT90S) that must be above zero; anything else is
// an Invalid error naming the option.
func PositiveDuration(key, v string) (time.Duration, error) {
	d, err := duration.Parse(v)
	if err != nil || d <= 0 {
		return 0, Invalidf("%s=%q is not a positive duration such as 5s or PT5S", key, v)
	}
	return d, nil
}

// Set takes the TLS file options of a store DSN: cacert, cert and key. It
// reports whether key was one of them.
func (f *TLSFiles) Set(key, v string) bool {
	switch key {
	case "cacert":
		f.CA = v
	case "cert":
		f.Cert = v
	case "key":
		f.Key = v
	default:
		return false
	}
	return true
}
