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

// Time formats t for JSON and YAML documents: RFC 3339 with fractional
// seconds, in UTC; "" for the zero time.
func Time(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
