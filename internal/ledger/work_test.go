package ledger

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// Each busy basis over a window of 1 s samples, against the busy fraction
// the samples were made from; a stage's busy instances are their sum, its
// basis the weakest.
func TestBusyFraction(t *testing.T) {
	hist := func(o *engine.Observation, m engine.Metric, count, sum float64) {
		h := &o.Histograms[m.HistogramIndex()]
		*h = engine.Histogram{Present: true, HasCount: true, Count: count, Sum: sum,
			Buckets: []engine.Bucket{{UpperBound: 1, Count: count}, {UpperBound: math.Inf(1), Count: count}}}
	}
	// Each builds instance's observation at second s.
	cases := []struct {
		name   string
		eng    engine.Engine
		role   engine.Role
		build  func(o *engine.Observation, s float64)
		busy   float64
		basis  string
		labels map[string]string
	}{
		{"SGLang, two ranks idle 0.7 s and 0.5 s a second", engine.SGLang, engine.Prefill, func(o *engine.Observation, s float64) {
			o.Counters = append(o.Counters, engine.CounterValue{Metric: engine.SchedulerIdle, Series: 7, Value: 0.7 * s},
				engine.CounterValue{Metric: engine.SchedulerIdle, Series: 8, Value: 0.5 * s})
		}, 0.4, BasisIdleCounter, nil},
		{"vLLM forward passes, two ranks 0.3 s and 0.5 s a second, beside the prefill time", engine.VLLM, engine.Prefill, func(o *engine.Observation, s float64) {
			o.Counters = append(o.Counters, engine.CounterValue{Metric: engine.ForwardPassSeconds, Series: 7, Value: 0.3 * s},
				engine.CounterValue{Metric: engine.ForwardPassSeconds, Series: 8, Value: 0.5 * s})
			hist(o, engine.PrefillTime, 2*s, 0.4*s)
			hist(o, engine.IterationTokens, s, 16384*s)
		}, 0.4, BasisForwardPass, nil},
		// A lost message makes the forward passes unknown (NaN) now: the
		// prefill time stands in.
		{"vLLM forward passes unknown now, the prefill time stands in", engine.VLLM, engine.Prefill, func(o *engine.Observation, s float64) {
			v := 0.3 * s
			if s == 10 {
				v = math.NaN()
			}
			o.Counters = append(o.Counters, engine.CounterValue{Metric: engine.ForwardPassSeconds, Series: 7, Value: v})
			hist(o, engine.PrefillTime, 2*s, 0.4*s)
			hist(o, engine.IterationTokens, s, 16384*s)
		}, 0.2, BasisPrefillTime, nil},
		{"TensorRT-LLM, 0.35 busy seconds a second", engine.TensorRTLLM, engine.Prefill, func(o *engine.Observation, s float64) {
			o.Counters = append(o.Counters, engine.CounterValue{Metric: engine.BusySeconds, Series: 7, Value: 0.35 * s})
		}, 0.35, BasisBusyCounter, nil},
		// The window's five samples (6 to 10 s): three at 0.6, two idle.
		{"SGLang occupancy, idle (NaN) every other second", engine.SGLang, engine.Prefill, func(o *engine.Observation, s float64) {
			v := 0.6
			if int(s)%2 == 1 {
				v = math.NaN()
			}
			o.Gauges[engine.ForwardOccupancy.GaugeIndex()], o.HasGauges[engine.ForwardOccupancy.GaugeIndex()] = v, true
		}, 0.36, BasisOccupancy, nil},
		{"vLLM prefill, two requests a step, 0.2 s each, 1 step a second", engine.VLLM, engine.Prefill, func(o *engine.Observation, s float64) {
			hist(o, engine.PrefillTime, 2*s, 0.4*s)
			hist(o, engine.IterationTokens, s, 16384*s)
		}, 0.2, BasisPrefillTime, nil},
		{"vLLM prefill, one prompt over four steps of 0.1 s", engine.VLLM, engine.Prefill, func(o *engine.Observation, s float64) {
			hist(o, engine.PrefillTime, s, 0.4*s)
			hist(o, engine.IterationTokens, 4*s, 8192*s)
		}, 0.4, BasisPrefillTime, nil},
		{"vLLM decode, 20 steps of 25 ms a second", engine.VLLM, engine.Decode, func(o *engine.Observation, s float64) {
			hist(o, engine.IterationTokens, 20*s, 320*s)
			hist(o, engine.ITL, 320*s, 320*0.025*s)
		}, 0.5, BasisStepTime, map[string]string{LabelMaxNumSeqs: "48"}},
		{"TensorRT-LLM on Prometheus, a context batch in 3 of 5 samples", engine.TensorRTLLM, engine.Prefill, func(o *engine.Observation, s float64) {
			v := 0.0
			if int(s)%5 < 3 {
				v = 2
			}
			o.Gauges[engine.ContextRequests.GaugeIndex()], o.HasGauges[engine.ContextRequests.GaugeIndex()] = v, true
		}, 0.6, BasisSampled, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := New(Config{Interval: time.Second, Window: 5 * time.Second})
			l.SetTargets([]engine.Target{{Name: "x", Role: c.role, Engine: c.eng, Labels: c.labels}})
			var p Point
			for s := 0.0; s <= 10; s++ {
				o := obs(c.role, 3*s, math.NaN(), map[engine.Metric]float64{engine.Running: 12})
				o.Engine = c.eng
				c.build(o, s)
				l.Record(Scrape{Target: "x", Time: at(s), Obs: o})
				p = l.Tick(at(s + 0.5))
			}
			sp := p.Prefill
			if c.role == engine.Decode {
				sp = p.Decode
				if b := sp.Batch; b == nil || !b.Limit.OK() || b.Limit.V != 48 || b.LimitBasis != BasisMaxNumSeqs || !b.Running.OK() || b.Running.V != 12 {
					t.Errorf("decode batch %+v", b)
				}
			}
			if !sp.Busy.OK() || math.Abs(sp.Busy.V-c.busy) > 1e-9 || sp.BusyBasis != c.basis {
				t.Errorf("busy %+v (%s), want %v (%s)", sp.Busy, sp.BusyBasis, c.busy, c.basis)
			}
		})
	}
}

// A stage with an instance that exports no busy-time signal has none: its
// sum would read as the whole stage's.
func TestBusyNeedsEveryInstance(t *testing.T) {
	l := New(Config{Interval: time.Second, Window: 5 * time.Second})
	l.SetTargets([]engine.Target{{Name: "a", Role: engine.Prefill, Engine: engine.SGLang}, {Name: "b", Role: engine.Prefill, Engine: engine.SGLang}})
	var p Point
	for s := 0.0; s <= 6; s++ {
		for _, name := range []string{"a", "b"} {
			o := obs(engine.Prefill, s, math.NaN(), nil)
			o.Engine = engine.SGLang
			if name == "a" {
				o.Counters = append(o.Counters, engine.CounterValue{Metric: engine.SchedulerIdle, Series: 9, Value: 0.5 * s})
			}
			l.Record(Scrape{Target: name, Time: at(s), Obs: o})
		}
		p = l.Tick(at(s + 0.5))
	}
	wantAbsent(t, "prefill busy", p.Prefill.Busy, "1 of 2 prefill instances export no busy-time signal")
}

// The batch a decode instance can run is the lesser of max_num_seqs and
// what its KV cache holds: 2000 blocks of 16 tokens, requests of 1000-token
// prompts and 200-token outputs holding 1000 + 100 + 8 tokens each on
// average, 28.9 requests.
func TestKVHeldBatch(t *testing.T) {
	const held = 2000 * 16 / (1000 + 100 + 8.0)
	f := func(name, maxNumSeqs string, blocks float64, want Num, basis string) {
		t.Helper()
		l := New(Config{Interval: time.Second, Window: 5 * time.Second})
		var labels map[string]string
		if maxNumSeqs != "" {
			labels = map[string]string{LabelMaxNumSeqs: maxNumSeqs}
		}
		l.SetTargets([]engine.Target{{Name: "d", Role: engine.Decode, Engine: engine.VLLM, Labels: labels}})
		var p Point
		for s := 0.0; s <= 10; s++ {
			g := map[engine.Metric]float64{engine.Running: 12, engine.KVBlockSize: 16}
			if blocks > 0 {
				g[engine.KVBlocks] = blocks
			}
			o := obs(engine.Decode, 2*s, math.NaN(), g)
			o.Counters = append(o.Counters, engine.CounterValue{Metric: engine.PromptTokens, Series: 3, Value: 2000 * s},
				engine.CounterValue{Metric: engine.GenerationTokens, Series: 4, Value: 400 * s})
			l.Record(Scrape{Target: "d", Time: at(s), Obs: o})
			p = l.Tick(at(s + 0.5))
		}
		b := p.Decode.Batch
		if b == nil || b.Limit.OK() != want.OK() || (want.OK() && math.Abs(b.Limit.V-want.V) > 1e-9) ||
			(!want.OK() && !strings.Contains(b.Limit.Why, want.Why)) || b.LimitBasis != basis {
			t.Errorf("%s: batch %+v, want limit %+v (%s)", name, b, want, basis)
		}
	}
	f("the cache holds fewer than max_num_seqs", "64", 2000, Val(held), BasisKVCache)
	f("max_num_seqs is the lesser", "16", 2000, Val(16), BasisMaxNumSeqs)
	f("no cache size: max_num_seqs", "64", 0, Val(64), BasisMaxNumSeqs)
	f("the cache alone is no limit", "", 2000, Absent("the KV caches hold 29 requests"), "")
}

// Decode's step time is the inter-token latency's mean over the window,
// else the iteration's loop time or latency; absent, with the reason,
// where an instance has none.
func TestDecodeStepTime(t *testing.T) {
	f := func(name string, build func(o *engine.Observation, s float64), want Num) {
		t.Helper()
		l := New(Config{Interval: time.Second, Window: 5 * time.Second})
		l.SetTargets([]engine.Target{{Name: "d", Role: engine.Decode, Engine: engine.TensorRTLLM}})
		var p Point
		for s := 0.0; s <= 10; s++ {
			o := obs(engine.Decode, 2*s, math.NaN(), map[engine.Metric]float64{engine.Running: 12})
			build(o, s)
			l.Record(Scrape{Target: "d", Time: at(s), Obs: o})
			p = l.Tick(at(s + 0.5))
		}
		got := p.Decode.Batch.Step
		if got.OK() != want.OK() || (want.OK() && math.Abs(got.V-want.V) > 1e-9) || (!want.OK() && !strings.Contains(got.Why, want.Why)) {
			t.Errorf("%s: step %+v, want %+v", name, got, want)
		}
	}
	gauge := func(m engine.Metric, v func(s float64) float64) func(*engine.Observation, float64) {
		return func(o *engine.Observation, s float64) {
			o.Gauges[m.GaugeIndex()], o.HasGauges[m.GaugeIndex()] = v(s), true
		}
	}
	f("inter-token latency, 300 tokens 25 ms apart a second", func(o *engine.Observation, s float64) {
		o.Histograms[engine.ITL.HistogramIndex()] = engine.Histogram{Present: true, HasSum: true, HasCount: true, Count: 300 * s, Sum: 7.5 * s,
			Buckets: []engine.Bucket{{UpperBound: 0.05, Count: 300 * s}, {UpperBound: math.Inf(1), Count: 300 * s}}}
		gauge(engine.IterationLoop, func(float64) float64 { return 0.5 })(o, s)
	}, Val(0.025))
	// The window's samples at 6 to 10 s: loops of 20 to 28 ms.
	f("the iteration loop's mean", gauge(engine.IterationLoop, func(s float64) float64 { return 0.008 + 0.002*s }), Val(0.024))
	f("the iteration latency", gauge(engine.IterationLatency, func(float64) float64 { return 0.04 }), Val(0.04))
	f("nothing", func(*engine.Observation, float64) {}, Absent("no step time"))
}
