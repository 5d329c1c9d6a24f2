//go:build !no_etcd

package all

import _ "github.com/schedlock/schedlock/dialects/etcd" // registers the etcd backend
