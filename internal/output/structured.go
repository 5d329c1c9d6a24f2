package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"go.yaml.in/yaml/v3"
)

// WriteJSON writes v as indented JSON followed by a newline. HTML
// characters are not escaped, so details read as they are.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// WriteYAML writes v as block-style YAML with exactly the field names and
// order of its JSON encoding.
func WriteYAML(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write yaml: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(buf.Bytes(), &doc); err != nil {
		return fmt.Errorf("write yaml: %w", err)
	}
	blockStyle(&doc)
	ye := yaml.NewEncoder(w)
	ye.SetIndent(2)
	if err := ye.Encode(&doc); err != nil {
		return fmt.Errorf("write yaml: %w", err)
	}
	return ye.Close()
}

// blockStyle drops the flow and quoting styles the JSON text gave the
// nodes, so the encoder writes block YAML and quotes only where needed.
// Empty collections stay in flow style: [] and {}.
func blockStyle(n *yaml.Node) {
	switch n.Kind {
	case yaml.MappingNode, yaml.SequenceNode:
		if len(n.Content) > 0 {
			n.Style = 0
		}
	case yaml.ScalarNode:
		n.Style = 0
	}
	for _, c := range n.Content {
		blockStyle(c)
	}
}

// TimeLayout is the layout of every time in JSON and YAML documents:
// RFC 3339 in UTC with exactly three fractional digits,
// "2025-01-02T03:04:05.600Z".
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// Time formats t for JSON and YAML documents in TimeLayout; "" for the
// zero time.
func Time(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(TimeLayout)
}

// WriteJSONLine writes v as one line of compact JSON: a record of a JSON
// Lines stream (jsonlines.org), as `--watch -o json` writes one per
// refresh.
func WriteJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}
