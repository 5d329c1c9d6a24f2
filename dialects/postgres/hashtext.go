package postgres

import "math/bits"

// PostgreSQL's text hashes, as a program that locks
// pg_advisory_lock(hashtext('NAME')) takes them, computed here so that a
// raw session name's key is known without a round trip (the SessionLocker
// keeps two names of one key apart in the process). They are Bob Jenkins'
// lookup3 hash as src/common/hashfn.c has it since PostgreSQL 8.4
// (hash_bytes, hash_bytes_extended), with words read little-endian as on
// every server this runs against. A big-endian server, or one whose
// hashtext differs, gives other keys: SessionOps.Prepare compares these
// with the server's own on every lock connection and refuses to lock when
// they differ. Text under a deterministic collation (every database
// default) hashes its bytes, as here.

// Hashtext is hashtext(name): an int4.
func Hashtext(name string) int32 { return int32(hashBytes([]byte(name))) }

// HashtextExtended is hashtextextended(name, 0): a bigint (PostgreSQL 11+).
func HashtextExtended(name string) int64 {
	return int64(hashBytesExtended([]byte(name), 0))
}

// hashInit is the start of a, b and c for a key of n bytes.
func hashInit(n int) uint32 { return 0x9e3779b9 + uint32(n) + 3923095 }

// hashMix is lookup3's mix().
func hashMix(a, b, c uint32) (uint32, uint32, uint32) {
	a -= c
	a ^= bits.RotateLeft32(c, 4)
	c += b
	b -= a
	b ^= bits.RotateLeft32(a, 6)
	a += c
	c -= b
	c ^= bits.RotateLeft32(b, 8)
	b += a
	a -= c
	a ^= bits.RotateLeft32(c, 16)
	c += b
	b -= a
	b ^= bits.RotateLeft32(a, 19)
	a += c
	c -= b
	c ^= bits.RotateLeft32(b, 4)
	b += a
	return a, b, c
}

// hashFinal is lookup3's final().
func hashFinal(a, b, c uint32) (uint32, uint32, uint32) {
	c ^= b
	c -= bits.RotateLeft32(b, 14)
	a ^= c
	a -= bits.RotateLeft32(c, 11)
	b ^= a
	b -= bits.RotateLeft32(a, 25)
	c ^= b
	c -= bits.RotateLeft32(b, 16)
	a ^= c
	a -= bits.RotateLeft32(c, 4)
	b ^= a
	b -= bits.RotateLeft32(a, 14)
	c ^= b
	c -= bits.RotateLeft32(b, 24)
	return a, b, c
}

// hashBody runs the 12-byte blocks and the tail of k through a, b and c,
// then final().
func hashBody(k []byte, a, b, c uint32) (uint32, uint32, uint32) {
	for len(k) >= 12 {
		a += le32(k[0:4])
		b += le32(k[4:8])
		c += le32(k[8:12])
		a, b, c = hashMix(a, b, c)
		k = k[12:]
	}
	// The last 0-11 bytes, little-endian: the low byte of c is left for
	// the length, as in hash_bytes.
	var tail [12]byte
	copy(tail[:], k)
	switch n := len(k); {
	case n > 8:
		c += uint32(tail[8])<<8 | uint32(tail[9])<<16 | uint32(tail[10])<<24
		fallthrough
	case n > 4:
		b += le32(tail[4:8])
		fallthrough
	case n > 0:
		a += le32(tail[0:4])
	}
	return hashFinal(a, b, c)
}

// hashBytes is hash_bytes (hash_any): the 32-bit hash of k.
func hashBytes(k []byte) uint32 {
	v := hashInit(len(k))
	_, _, c := hashBody(k, v, v, v)
	return c
}

// hashBytesExtended is hash_bytes_extended (hash_any_extended): the 64-bit
// hash of k with seed; with seed 0 its low 32 bits are hashBytes(k).
func hashBytesExtended(k []byte, seed uint64) uint64 {
	a := hashInit(len(k))
	b, c := a, a
	if seed != 0 {
		a += uint32(seed >> 32)
		b += uint32(seed)
		a, b, c = hashMix(a, b, c)
	}
	_, b, c = hashBody(k, a, b, c)
	return uint64(b)<<32 | uint64(c)
}

// le32 reads 4 bytes little-endian.
func le32(p []byte) uint32 {
	return uint32(p[0]) | uint32(p[1])<<8 | uint32(p[2])<<16 | uint32(p[3])<<24
}
