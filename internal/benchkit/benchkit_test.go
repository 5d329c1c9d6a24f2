package benchkit

import (
	"context"
	"testing"
	"time"
)

func TestSummariseOrdersLatencies(t *testing.T) {
	var in []time.Duration
	for _, ms := range []int{9, 1, 5, 3, 7, 2, 8, 4, 6, 100} {
		in = append(in, time.Duration(ms)*time.Millisecond)
	}
	h := summarise(HandOver{Strategy: "session"}, in)
	want := HandOver{Strategy: "session", HandOvers: 10, MinMS: 1, MedianMS: 5.5, MeanMS: 14.5, P90MS: 9, P99MS: 100, MaxMS: 100}
	if h != want {
		t.Errorf("summarise = %+v, want %+v", h, want)
	}
	if in[0] != 9*time.Millisecond {
		t.Error("summarise sorted its input in place")
	}
	one := summarise(HandOver{}, []time.Duration{3 * time.Millisecond})
	if one.MinMS != 3 || one.MedianMS != 3 || one.P99MS != 3 || one.MaxMS != 3 {
		t.Errorf("one hand-over: %+v", one)
	}
	if none := summarise(HandOver{}, nil); none.HandOvers != 0 || none.MaxMS != 0 {
		t.Errorf("no hand-over: %+v", none)
	}
}

func TestPercentileIndexIsNearestRank(t *testing.T) {
	for _, tc := range []struct {
		n    int
		p    float64
		want int
	}{{1, 0.99, 0}, {10, 0.99, 9}, {100, 0.99, 98}, {101, 0.99, 99}, {1000, 0.99, 989}, {4, 0.5, 1}} {
		if got := percentileIndex(tc.n, tc.p); got != tc.want {
			t.Errorf("percentileIndex(%d, %v) = %d, want %d", tc.n, tc.p, got, tc.want)
		}
	}
}

func TestBudgetCountsCyclesOrTime(t *testing.T) {
	r, err := loop(Budget{Cycles: 7}, func() error { return nil })
	if err != nil || r.Cycles != 7 {
		t.Errorf("cycle budget: %+v %v, want 7 cycles", r, err)
	}
	start := time.Now()
	r, err = loop(Budget{Duration: 20 * time.Millisecond}, func() error { time.Sleep(time.Millisecond); return nil })
	if err != nil || r.Cycles < 1 || time.Since(start) < 20*time.Millisecond || r.CyclesPerSecond <= 0 {
		t.Errorf("duration budget: %+v %v after %s", r, err, time.Since(start))
	}
	if m := (Budget{}).begin(); !m.deadline.Equal(m.start.Add(DefaultDuration)) {
		t.Errorf("zero budget runs until %s, want DefaultDuration", m.deadline.Sub(m.start))
	}
}

func TestContendStopsAtTheCycleBudget(t *testing.T) {
	c, err := contend(context.Background(), 4, Budget{Cycles: 100}, true, func(ctx context.Context, _ int, tl *tally) {
		for tl.m.more() && ctx.Err() == nil {
			tl.refusals.Add(1)
			tl.success()
		}
	})
	if err != nil || c.Successes < 100 || c.Successes > 103 || c.Refusals < c.Successes {
		t.Errorf("contend = %+v, %v: want about 100 successes", c, err)
	}
}

func TestRatioAndRound(t *testing.T) {
	if r := ratio(1, 3); r == nil || *r != 0.333 {
		t.Errorf("ratio(1, 3) = %v", r)
	}
	if r := ratio(1, 0); r != nil {
		t.Errorf("ratio(1, 0) = %v, want nil", *r)
	}
	if got := round(-1.25, 1); got != -1.3 {
		t.Errorf("round(-1.25, 1) = %v", got)
	}
}

func TestSlicesAddUpToTheBudget(t *testing.T) {
	for _, tc := range []struct {
		b    Budget
		want []Budget
	}{
		{Budget{Cycles: 7}, []Budget{{Cycles: 2}, {Cycles: 2}, {Cycles: 1}, {Cycles: 1}, {Cycles: 1}}},
		{Budget{Cycles: 3}, []Budget{{Cycles: 1}, {Cycles: 1}, {Cycles: 1}}},
		{Budget{Duration: time.Second}, []Budget{{Duration: 200 * time.Millisecond}, {Duration: 200 * time.Millisecond}, {Duration: 200 * time.Millisecond}, {Duration: 200 * time.Millisecond}, {Duration: 200 * time.Millisecond}}},
	} {
		got := tc.b.slices()
		if len(got) != len(tc.want) {
			t.Errorf("%+v.slices() = %+v, want %+v", tc.b, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%+v.slices() = %+v, want %+v", tc.b, got, tc.want)
				break
			}
		}
	}
	var r Rate
	r.add(Rate{Cycles: 10, Seconds: 1})
	r.add(Rate{Cycles: 30, Seconds: 1})
	if r.Cycles != 40 || r.Seconds != 2 || r.CyclesPerSecond != 20 {
		t.Errorf("summed rate %+v, want 40 cycles in 2 s", r)
	}
}
