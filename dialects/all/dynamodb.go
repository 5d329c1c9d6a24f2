//go:build !no_dynamodb

package all

import _ "github.com/schedlock/schedlock/dialects/dynamodb" // registers the DynamoDB backend
