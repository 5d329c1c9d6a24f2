package postgres

import (
	"crypto/sha256"
	"encoding/hex"
	"math/big"
	"testing"
)

// The documented key scheme, pinned: changing Key would silently make old
// and new binaries take different locks for the same name.
func TestKeyIsStable(t *testing.T) {
	tests := []struct {
		name          string
		key           int64
		classid, objd uint32
	}{
		{"nightly-report", 7440995589958059143, 1732491792, 2729624711},
		{"a", -3848465438864589366, 3398926610, 3390815690},
		{"", -2039914840885289964, 3820012610, 2566659092},
		{"ünïcødé/锁", 6289172789733795497, 1464312148, 2938283689},
		{"schedlock", -2478691364268579944, 3717851990, 1022452632},
	}
	for _, tt := range tests {
		if got := Key(tt.name); got != tt.key {
			t.Errorf("Key(%q) = %d, want %d", tt.name, got, tt.key)
		}
		c, o := KeyParts(tt.key)
		if c != tt.classid || o != tt.objd {
			t.Errorf("KeyParts(%d) = %d, %d; want %d, %d", tt.key, c, o, tt.classid, tt.objd)
		}
		if back := KeyFromParts(c, o); back != tt.key {
			t.Errorf("KeyFromParts(%d, %d) = %d, want %d", c, o, back, tt.key)
		}
	}
}

// keyViaHex recomputes the scheme another way: the first 16 hex digits of
// the digest as a two's-complement 64-bit number.
func keyViaHex(name string) int64 {
	sum := sha256.Sum256([]byte(name))
	n, _ := new(big.Int).SetString(hex.EncodeToString(sum[:])[:16], 16)
	if n.Bit(63) == 1 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), 64))
	}
	return n.Int64()
}

func FuzzKey(f *testing.F) {
	for _, seed := range []string{"", "a", "nightly-report", "ünïcødé/锁", "\x00\xff"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, name string) {
		k := Key(name)
		if k != Key(name) {
			t.Fatalf("Key(%q) is not deterministic", name)
		}
		if want := keyViaHex(name); k != want {
			t.Fatalf("Key(%q) = %d, the documented scheme gives %d", name, k, want)
		}
		c, o := KeyParts(k)
		if KeyFromParts(c, o) != k {
			t.Fatalf("KeyParts/KeyFromParts do not round-trip %d", k)
		}
		if uint64(c) != uint64(k)>>32 || uint64(o) != uint64(k)&0xffffffff {
			t.Fatalf("KeyParts(%d) = %d, %d: not the high and low halves", k, c, o)
		}
	})
}
