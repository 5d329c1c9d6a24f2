//go:build !no_mysql

package main

import (
	"io"
	"log"

	"github.com/go-sql-driver/mysql"
)

// The MySQL driver logs connection trouble ("unexpected EOF") on stderr by
// itself; schedlock reports failures through its own one-line errors, so the
// driver's log is dropped.
func init() { _ = mysql.SetLogger(log.New(io.Discard, "", 0)) }
