package benchkit

import (
	"errors"
	"testing"
	"time"
)

func TestInterleaveRunsBothInRandomOrder(t *testing.T) {
	var seq []int
	first := func() error { seq = append(seq, 1); time.Sleep(time.Millisecond); return nil }
	second := func() error { seq = append(seq, 2); return nil }
	r1, r2, err := interleave(Budget{Cycles: 200}, first, second)
	if err != nil || r1.Cycles != 200 || r2.Cycles != 200 {
		t.Fatalf("interleave = %+v, %+v, %v; want 200 cycles each", r1, r2, err)
	}
	// Each is timed on its own: the sleeping one has at least its sleeps.
	if r1.Seconds < 0.2 || r2.Seconds >= r1.Seconds {
		t.Errorf("seconds %v and %v: want the first's 200 ms of sleep in its own time only", r1.Seconds, r2.Seconds)
	}
	firstFirst := 0
	for i := 0; i < len(seq); i += 2 {
		if seq[i] == seq[i+1] {
			t.Fatalf("iteration %d ran %d twice: %v", i/2, seq[i], seq[i:i+2])
		}
		if seq[i] == 1 {
			firstFirst++
		}
	}
	if firstFirst == 0 || firstFirst == 200 {
		t.Errorf("the first cycle ran first in %d of 200 iterations: want a random order", firstFirst)
	}
}

func TestInterleaveStopsAtTheFirstFailure(t *testing.T) {
	boom := errors.New("boom")
	n := 0
	second := func() error {
		if n++; n == 3 {
			return boom
		}
		return nil
	}
	r1, r2, err := interleave(Budget{Cycles: 100}, func() error { return nil }, second)
	if !errors.Is(err, boom) || r2.Cycles != 2 || r1.Cycles < 2 || r1.Cycles > 3 {
		t.Errorf("interleave = %+v, %+v, %v; want boom after 2 good cycles of the second", r1, r2, err)
	}
}

func TestInterleaveSharesADurationBudget(t *testing.T) {
	start := time.Now()
	r1, r2, err := interleave(Budget{Duration: 20 * time.Millisecond}, func() error { time.Sleep(time.Millisecond); return nil }, func() error { return nil })
	if err != nil || r1.Cycles < 1 || r1.Cycles != r2.Cycles || time.Since(start) < 20*time.Millisecond {
		t.Errorf("interleave = %+v, %+v, %v after %s", r1, r2, err, time.Since(start))
	}
}
