//go:build !no_kubernetes

package all

import _ "github.com/schedlock/schedlock/dialects/kubernetes" // registers the Kubernetes Lease backend
