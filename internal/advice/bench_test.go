package advice

import (
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/sim"
)

// BenchmarkObserve is the learner's cost per point of a 6-instance
// cluster; /metrics and /api/v1/advice feed it each new point once.
func BenchmarkObserve(b *testing.B) {
	sc, err := sim.LoadScenario("decode-bound")
	if err != nil {
		b.Fatal(err)
	}
	pts, _ := run(b, sc, 1, 120*time.Second)
	b.ReportAllocs()
	b.ResetTimer()
	l := NewLearner(Options{})
	for i := 0; i < b.N; i++ {
		if i%len(pts) == 0 {
			l = NewLearner(Options{})
		}
		l.Observe(pts[i%len(pts)])
	}
}

// BenchmarkAdvise is one answer from learned capacities and a minute of
// points.
func BenchmarkAdvise(b *testing.B) {
	sc, err := sim.LoadScenario("decode-bound")
	if err != nil {
		b.Fatal(err)
	}
	pts, _ := run(b, sc, 1, 120*time.Second)
	caps := Learn(pts, Options{})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d := EstimateDemand(pts, time.Minute)
		if _, err := Advise(caps, d, DefaultHeadroom); err != nil {
			b.Fatal(err)
		}
	}
}
