package benchkit

import (
	"math/rand/v2"
	"time"
)

// interleave measures two cycles side by side: in every iteration each
// runs once, in a random order (so that neither always follows the
// other), each timed on its own, until the budget is spent — b.Cycles
// iterations, or b.Duration for the two together — or one fails. A load
// that comes and goes on the machine then weighs on both alike, where
// turns of whole loops one after the other would give one of them the
// quiet moments. Each Rate counts its own cycles over its own time.
func interleave(b Budget, first, second func() error) (Rate, Rate, error) {
	cycles := [2]func() error{first, second}
	var took [2]time.Duration
	var done [2]int64
	rates := func() (Rate, Rate) { return newRate(done[0], took[0]), newRate(done[1], took[1]) }
	m := b.begin()
	for m.more() {
		order := rand.IntN(2)
		for k := range 2 {
			i := k ^ order
			start := time.Now()
			err := cycles[i]()
			took[i] += time.Since(start)
			if err != nil {
				r0, r1 := rates()
				return r0, r1, err
			}
			done[i]++
		}
		m.add()
	}
	r0, r1 := rates()
	return r0, r1, nil
}
