package benchkit

import "testing"

// Cycles done within one tick of the clock (an in-memory fake) are a rate
// faster than the clock can tell, never a rate of zero: a zero limit would
// leave the report's ratios empty.
func TestRateWithinOneClockTick(t *testing.T) {
	if r := newRate(10, 0); r.CyclesPerSecond <= 0 {
		t.Errorf("newRate(10, 0) = %+v, want a positive rate", r)
	}
	if r := newRate(0, 0); r.CyclesPerSecond != 0 {
		t.Errorf("newRate(0, 0) = %+v, want no rate", r)
	}
}

// A sum of turns each shorter than a microsecond (Seconds rounds them to
// zero) still has their rate.
func TestRateSumOfSubMicrosecondTurns(t *testing.T) {
	var sum Rate
	for range 3 {
		sum.add(newRate(10, 200))
	}
	if sum.Cycles != 30 || sum.CyclesPerSecond != round(30/600e-9, 1) {
		t.Errorf("sum = %+v, want 30 cycles at %v/s", sum, round(30/600e-9, 1))
	}
}
