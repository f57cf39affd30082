package saturation

import "testing"

func TestPinned(t *testing.T) {
	f := func(running []float64, want bool, level float64) {
		t.Helper()
		got, lv := Pinned(running)
		if got != want || (want && lv != level) {
			t.Errorf("Pinned(%v) = %v, %g; want %v, %g", running, got, lv, want, level)
		}
	}
	f([]float64{4, 4, 4, 4, 4, 4, 4, 4, 4, 4}, true, 4)
	// One sample between a finish and the next admission, anywhere.
	f([]float64{4, 4, 4, 4, 4, 4, 4, 4, 4, 3}, true, 4)
	f([]float64{3, 4, 4, 4, 4, 4, 4, 4, 4, 4}, true, 4)
	f([]float64{4, 4, 4, 4, 0, 4, 4, 4, 4, 4}, true, 4)
	// Two dips of ten are still the limit; three of ten, or two in a
	// row, are a batch with room.
	f([]float64{4, 3, 4, 4, 4, 4, 4, 3, 4, 4}, true, 4)
	f([]float64{4, 3, 4, 3, 4, 4, 4, 3, 4, 4}, false, 0)
	f([]float64{4, 4, 4, 3, 3, 4, 4, 4, 4, 4}, false, 0)
	// A batch that moves with arrivals.
	f([]float64{20, 21, 22, 23, 24, 20, 21, 22, 23, 24}, false, 0)
	// Within 5% of a large batch's level is no dip, but not at it either.
	f([]float64{64, 62, 64, 64, 64, 64, 64, 63, 64, 64}, true, 64)
	f([]float64{64, 62, 63, 64, 64, 61, 64, 63, 64, 64}, false, 0)
	// One request is no batch; too few samples say nothing.
	f([]float64{1, 1, 1, 1, 1, 1}, false, 0)
	f([]float64{4, 4, 4, 4}, false, 0)
}
