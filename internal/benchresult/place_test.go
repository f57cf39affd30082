package benchresult

import (
	"testing"
	"time"
)

func TestPlace(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	cmd := Span{Start: t0, End: t0.Add(100 * time.Second)}
	f := func(name string, r Result, cmd Span, method string, from time.Time, residual float64) {
		t.Run(name, func(t *testing.T) {
			p := Place(r, cmd)
			if p.Method != method || !p.From.Equal(from) || p.Why == "" {
				t.Fatalf("placed %+v, want %s from %s", p, method, from)
			}
			switch {
			case residual < 0 && p.Residual != nil:
				t.Errorf("residual %g, want absent", *p.Residual)
			case residual >= 0 && (p.Residual == nil || *p.Residual != residual):
				t.Errorf("residual %v, want %g", p.Residual, residual)
			}
		})
	}
	wall := Result{Tool: "aiperf", Clock: clockWall, Start: t0.Add(5 * time.Second), End: t0.Add(95 * time.Second)}
	mono := Result{Tool: "vllm bench serve", Clock: clockMonotonic, Duration: ptr(90.0)}
	f("wall inside the command", wall, cmd, PlacedWall, wall.Start, 0)
	late := wall
	late.End = t0.Add(103 * time.Second)
	f("wall past the command's end", late, cmd, PlacedWall, late.Start, 3)
	f("wall, no command", wall, Span{}, PlacedWall, wall.Start, -1)
	f("monotonic at the command's end", mono, cmd, PlacedCommandEnd, t0.Add(10*time.Second), 10)
	f("monotonic, no command", mono, Span{}, PlacedNone, time.Time{}, -1)
	long := mono
	long.Duration = ptr(150.0)
	f("monotonic, longer than the command", long, cmd, PlacedNone, time.Time{}, -1)
}

func TestQuantileIsNumpys(t *testing.T) {
	// numpy.percentile([1, 2, 3, 4, 10], q) for q = 0, 50, 90, 99, 100.
	xs := []float64{10, 1, 3, 2, 4}
	for q, want := range map[float64]float64{0: 1, 0.5: 3, 0.9: 7.6, 0.99: 9.76, 1: 10} {
		if got := Quantile(xs, q); got == nil || *got < want-1e-12 || *got > want+1e-12 {
			t.Errorf("quantile %g = %v, want %g", q, got, want)
		}
	}
	if Quantile(nil, 0.5) != nil || Mean(nil) != nil {
		t.Error("no values: want absent")
	}
}
