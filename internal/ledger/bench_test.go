package ledger

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/kvsize"
)

// BenchmarkTick1000 measures one tick over 1,000 instances, each with 15 s
// of 1 s samples, three latency histograms and the usual gauges: the
// ledger's share of a 1,000-engine cluster at 1 s.
func BenchmarkTick1000(b *testing.B) {
	l := New(Config{Interval: time.Second, Window: 5 * time.Second, KVRequest: kvsize.Request{Bytes: 1 << 30}})
	var infos []engine.Target
	for i := 0; i < 1000; i++ {
		role := engine.Prefill
		if i%2 == 1 {
			role = engine.Decode
		}
		infos = append(infos, engine.Target{Name: fmt.Sprintf("e%04d", i), Role: role})
	}
	l.SetTargets(infos)
	bounds := []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, math.Inf(1)}
	o := obs(engine.Prefill, 0, 0, map[engine.Metric]float64{engine.Running: 3, engine.Waiting: 1, engine.KVUsage: 0.5})
	for _, m := range []engine.Metric{engine.TTFT, engine.ITL, engine.E2E} {
		h := &o.Histograms[m.HistogramIndex()]
		h.Present, h.HasCount = true, true
		for _, bd := range bounds {
			h.Buckets = append(h.Buckets, engine.Bucket{UpperBound: bd})
		}
	}
	for s := 0; s < 15; s++ {
		for i, in := range infos {
			o.Counters[0].Value = float64(s * (i + 1))
			o.Counters[1].Value = float64(s*(i+1)) * (1 << 30)
			for m := range o.Histograms {
				for k := range o.Histograms[m].Buckets {
					o.Histograms[m].Buckets[k].Count = float64(s * (k + 1))
				}
				o.Histograms[m].Count = float64(s * len(bounds))
			}
			l.Record(Scrape{Target: in.Name, Time: at(float64(s)), Obs: o})
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l.Tick(at(14.5))
	}
}

// BenchmarkRecord measures taking one scrape's observation.
func BenchmarkRecord(b *testing.B) {
	l := newLedger(1 << 30)
	o := obs(engine.Prefill, 0, 0, map[engine.Metric]float64{engine.Running: 3})
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		o.Counters[0].Value = float64(i)
		l.Record(Scrape{Target: "p0", Time: at(float64(i)), Obs: o})
	}
}
