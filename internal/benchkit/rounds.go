package benchkit

import "time"

// Rounds is how many slices the budget of a comparison is cut into. The
// figures compared with each other (round trip, raw statements, engine)
// are measured in turns, one slice each, Rounds times, so that a change in
// the machine's load during the run weighs on all of them alike.
const Rounds = 5

// slices cuts b into Rounds budgets (fewer when b has fewer cycles) whose
// cycles or durations add up to b's.
func (b Budget) slices() []Budget {
	if b.Cycles > 0 {
		n := min(int64(Rounds), b.Cycles)
		out := make([]Budget, n)
		for i := range out {
			out[i].Cycles = b.Cycles / n
			if int64(i) < b.Cycles%n {
				out[i].Cycles++
			}
		}
		return out
	}
	d := b.Duration
	if d <= 0 {
		d = DefaultDuration
	}
	out := make([]Budget, Rounds)
	for i := range out {
		out[i].Duration = max(d/Rounds, time.Millisecond)
	}
	return out
}

// add sums o into r and recomputes the rate.
func (r *Rate) add(o Rate) {
	r.Cycles += o.Cycles
	if o.elapsed == 0 { // a Rate not made by newRate: its Seconds
		o.elapsed = time.Duration(o.Seconds * float64(time.Second))
	}
	r.elapsed += o.elapsed
	r.Seconds = round(r.elapsed.Seconds(), 6)
	if r.elapsed > 0 {
		r.CyclesPerSecond = round(float64(r.Cycles)/r.elapsed.Seconds(), 1)
	}
}

// add sums o into c and recomputes the rates.
func (c *Contended) add(o Contended) {
	c.Successes += o.Successes
	c.Refusals += o.Refusals
	c.Seconds = round(c.Seconds+o.Seconds, 6)
	if c.Seconds > 0 {
		c.SuccessesPerSecond = round(float64(c.Successes)/c.Seconds, 1)
		c.RefusalsPerSecond = round(float64(c.Refusals)/c.Seconds, 1)
	}
}
