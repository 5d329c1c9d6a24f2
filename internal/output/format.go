// Package output renders command results for people and for scripts:
// tables (boxed on a terminal, tab-separated when piped), JSON, YAML, and
// for selfcheck reports Markdown and JUnit XML.
//
// JSON and YAML carry the same field names (YAML is written from the JSON
// encoding). Documents written here keep two rules that callers' types must
// keep too: lists are never null (use empty slices), and times are RFC 3339
// in UTC with milliseconds (format them with Time).
package output

import (
	"fmt"
	"strings"
)

// Format is an output format name as given to -o/--output.
type Format string

// The formats.
const (
	Table    Format = "table"
	JSON     Format = "json"
	YAML     Format = "yaml"
	Markdown Format = "markdown"
	JUnit    Format = "junit"
)

// Common are the formats every command offers.
var Common = []Format{Table, JSON, YAML}

// ReportFormats are the formats of selfcheck reports.
var ReportFormats = []Format{Table, JSON, YAML, Markdown, JUnit}

// ParseFormat returns the format named s if it is one of allowed. The error
// lists the allowed formats.
func ParseFormat(s string, allowed []Format) (Format, error) {
	for _, f := range allowed {
		if string(f) == strings.ToLower(strings.TrimSpace(s)) {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown output format %q: use one of %s", s, List(allowed))
}

// List joins formats for messages and help: "table, json, yaml".
func List(formats []Format) string {
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}
