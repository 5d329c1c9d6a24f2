//go:build !no_zookeeper

package all

import _ "github.com/schedlock/schedlock/dialects/zookeeper" // registers the ZooKeeper backend
