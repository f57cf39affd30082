package tui

import (
	"testing"
	"time"
)

func TestAdvance(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	pts := func(secs ...int) []Tick {
		out := make([]Tick, len(secs))
		for i, s := range secs {
			out[i].Time = t0.Add(time.Duration(s) * time.Second)
		}
		return out
	}
	snap := func(s int) *Snapshot { return &Snapshot{Point: &pts(s)[0].Point} }
	f := func(name string, hist []Tick, s *Snapshot, want []int) {
		t.Run(name, func(t *testing.T) {
			got := advance(hist, s)
			if len(got) != len(want) {
				t.Fatalf("%d points, want %d", len(got), len(want))
			}
			for i, w := range want {
				if !got[i].Time.Equal(t0.Add(time.Duration(w) * time.Second)) {
					t.Errorf("point %d at %v, want +%ds", i, got[i].Time, w)
				}
			}
		})
	}
	f("appends", pts(1, 2), snap(3), []int{1, 2, 3})
	f("same tick fetched twice", pts(1, 2, 3), snap(3), []int{1, 2, 3})
	f("history newer than the snapshot", pts(1, 2, 3, 4), snap(3), []int{1, 2, 3})
	f("no point yet", pts(1), &Snapshot{}, []int{1})
	long := make([]int, historyLen)
	for i := range long {
		long[i] = i
	}
	f("keeps the newest", pts(long...), snap(historyLen), append(long[1:], historyLen))
}
