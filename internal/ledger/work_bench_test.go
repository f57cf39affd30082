package ledger

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/kvsize"
)

// busyLedger is 200 instances with 15 s of 1 s samples of every busy-time
// signal the ledger reads: half SGLang (scheduler idle seconds of two
// ranks, forward occupancy), half vLLM (prefill time and iteration tokens,
// decode's inter-token latency), the latency histograms, KV transfer time,
// and a batch limit on each decode instance.
func busyLedger() (*Ledger, time.Time) {
	l := New(Config{Interval: time.Second, Window: 5 * time.Second, KVRequest: kvsize.Request{Bytes: 1 << 30}})
	var infos []engine.Target
	for i := 0; i < 200; i++ {
		role, eng := engine.Prefill, engine.SGLang
		if i%2 == 1 {
			role = engine.Decode
		}
		if i%4 >= 2 {
			eng = engine.VLLM
		}
		t := engine.Target{Name: fmt.Sprintf("e%03d", i), Role: role, Engine: eng}
		if role == engine.Decode {
			t.Labels = map[string]string{LabelMaxNumSeqs: "64"}
		}
		infos = append(infos, t)
	}
	l.SetTargets(infos)
	bounds := []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, math.Inf(1)}
	hists := []engine.Metric{engine.TTFT, engine.ITL, engine.E2E, engine.PrefillTime, engine.IterationTokens, engine.KVXferTime}
	mk := func(eng engine.Engine, role engine.Role) *engine.Observation {
		o := obs(role, 0, 0, map[engine.Metric]float64{engine.Running: 3, engine.Waiting: 1, engine.KVUsage: 0.5, engine.ForwardOccupancy: 0.4})
		o.Engine = eng
		if eng == engine.SGLang {
			o.Counters = append(o.Counters, engine.CounterValue{Metric: engine.SchedulerIdle, Series: 3}, engine.CounterValue{Metric: engine.SchedulerIdle, Series: 4})
		}
		for _, m := range hists {
			h := &o.Histograms[m.HistogramIndex()]
			h.Present, h.HasCount = true, true
			for _, bd := range bounds {
				h.Buckets = append(h.Buckets, engine.Bucket{UpperBound: bd})
			}
		}
		return o
	}
	for s := 0; s < 15; s++ {
		for i, in := range infos {
			o := mk(in.Engine, in.Role)
			o.Counters[0].Value = float64(s * (i + 1))
			o.Counters[1].Value = float64(s*(i+1)) * (1 << 30)
			for k := 2; k < len(o.Counters); k++ {
				o.Counters[k].Value = 0.4 * float64(s)
			}
			for m := range o.Histograms {
				h := &o.Histograms[m]
				for k := range h.Buckets {
					h.Buckets[k].Count = float64(s * (k + 1))
				}
				h.Count, h.Sum = float64(s*len(bounds)), 0.3*float64(s)
			}
			l.Record(Scrape{Target: in.Name, Time: at(float64(s)), Obs: o})
		}
	}
	return l, at(14.5)
}

// BenchmarkTickBusy200 is a tick over 200 instances that export every
// busy-time signal: BenchmarkWork200's cost is a share of it.
func BenchmarkTickBusy200(b *testing.B) {
	l, now := busyLedger()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l.Tick(now)
	}
}

// BenchmarkWork200 is the busy-time reading of those 200 instances alone
// (work.go), as each tick does it.
func BenchmarkWork200(b *testing.B) {
	l, now := busyLedger()
	if p := l.Tick(now); !p.Prefill.Busy.OK() || p.Decode.Batch == nil || !p.Decode.Batch.Limit.OK() {
		b.Fatalf("the fixture lacks busy time: %+v %+v", p.Prefill.Busy, p.Decode.Batch)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, name := range l.names {
			in := l.read(l.targets[name], now)
			w := in.work()
			_ = w
		}
	}
}
