package postgres

import (
	"crypto/sha256"
	"encoding/binary"
)

// Key maps a lock name to the bigint key of its advisory lock: the first 8
// bytes of SHA-256 of the name's UTF-8 bytes, read big-endian as a signed
// int64. The scheme is part of schedlock's interface and never changes; it
// does not depend on the server (unlike hashtext(), which changed between
// releases and depends on endianness). The same key in SQL (PostgreSQL 11+):
//
//	('x' || left(encode(sha256(convert_to(name, 'UTF8')), 'hex'), 16))::bit(64)::bigint
//
// Different names can share a key (one chance in 2^64 per pair); a key cannot
// be turned back into its name, so listings need the name from elsewhere.
func Key(name string) int64 {
	sum := sha256.Sum256([]byte(name))
	return int64(binary.BigEndian.Uint64(sum[:8]))
}

// KeyParts splits a bigint advisory key the way pg_locks shows it (with
// objsubid = 1): classid holds the high 32 bits and objid the low 32 bits,
// both as unsigned oids.
func KeyParts(key int64) (classid, objid uint32) {
	u := uint64(key)
	return uint32(u >> 32), uint32(u)
}

// KeyFromParts rebuilds a bigint advisory key from the classid and objid of
// a pg_locks row with objsubid = 1; it is the inverse of KeyParts.
func KeyFromParts(classid, objid uint32) int64 {
	return int64(uint64(classid)<<32 | uint64(objid))
}
