package dialects

import (
	"context"
)

// HolderLookup is implemented by Lockers that can name the holder of a
// lock on request. A refused Acquire does not look the holder up (a
// refusal is one round trip); a caller that wants to say who holds the
// lock asks with LookupHolder.
type HolderLookup interface {
	Holder(ctx context.Context, name string) (string, error)
}

// LookupHolder names the holder of name as locker sees it, or "" when the
// locker cannot tell or nobody holds it.
func LookupHolder(ctx context.Context, locker Locker, name string) (string, error) {
	if hl, ok := locker.(HolderLookup); ok {
		return hl.Holder(ctx, name)
	}
	return "", nil
}
