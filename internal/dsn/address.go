package dsn

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/schedlock/schedlock/internal/elide"
)

// checkHosts refuses a host list (hosts as a URL writes them, separated
// by commas) holding an address no dial could use; see checkAddress.
func checkHosts(hosts string) error {
	for _, h := range strings.Split(hosts, ",") {
		if err := checkAddress(strings.TrimSpace(h)); err != nil {
			return err
		}
	}
	return nil
}

// checkAddress refuses host[:port] when the port is not a number from 1
// to 65535, or when the host holds a colon outside brackets and is not an
// IPv6 address. An empty address or port leaves the scheme's default.
func checkAddress(addr string) error {
	host, port := addr, ""
	switch {
	case strings.HasPrefix(addr, "["):
		end := strings.IndexByte(addr, ']')
		if end < 0 {
			return fmt.Errorf("address %s has no closing ]: write [::1]:port", elide.Quote(addr))
		}
		host, port = addr[1:end], addr[end+1:]
		if port != "" && !strings.HasPrefix(port, ":") {
			return fmt.Errorf("address %s: after ] comes :port", elide.Quote(addr))
		}
		port = strings.TrimPrefix(port, ":")
		if !isIPv6(host) {
			return fmt.Errorf("address %s: only an IPv6 address goes in brackets", elide.Quote(addr))
		}
	case strings.Count(addr, ":") == 1:
		host, port, _ = strings.Cut(addr, ":")
	case strings.Count(addr, ":") > 1:
		if !isIPv6(addr) {
			return fmt.Errorf("address %s is not host:port (an IPv6 address goes in brackets: [::1]:port)", elide.Quote(addr))
		}
		return nil
	}
	if port == "" {
		return nil
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || strings.TrimLeft(port, "0123456789") != "" {
		return fmt.Errorf("address %s: port %s is not a number from 1 to 65535", elide.Quote(addr), elide.Quote(port))
	}
	return nil
}

// isIPv6 reports whether s is an IPv6 address, with or without a zone
// (fe80::1%eth0).
func isIPv6(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is6()
}
