// Command dump prints every character set converter of go-ora, one line
// each: the ID and a SHA-256 of the converter printed with %#v (every
// field, unexported ones included, maps in key order, nil apart from
// empty). oracle_charsets_test.go builds it with and without the overlay
// of scripts/oracharsets and compares the outputs.
package main

import (
	"crypto/sha256"
	"fmt"

	"github.com/sijms/go-ora/v2/converters"
)

func main() {
	for id := -1; id <= 4096; id++ {
		conv := converters.NewStringConverter(id)
		if conv == nil {
			continue
		}
		fmt.Printf("%d %x\n", id, sha256.Sum256([]byte(fmt.Sprintf("%#v", conv))))
	}
}
