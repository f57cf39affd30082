package ledger

import (
	"math"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// Each phase is the mean of its histogram's observations over the window,
// from the first source an instance exports: vLLM's queue and prefill
// times on prefill, NIXL's copy time, decode's inter-token latency for the
// first step; SGLang's per-stage latency where it has it. A phase no
// instance exports is absent with the sources that would be read; it is
// not folded into another.
func TestPoolPhases(t *testing.T) {
	pool := func(name string) map[string]string { return map[string]string{LabelPool: name} }
	targets := []engine.Target{
		{Name: "v-p0", Role: engine.Prefill, Labels: pool("v")},
		{Name: "v-d0", Role: engine.Decode, Labels: pool("v")},
		{Name: "s-p0", Role: engine.Prefill, Labels: pool("s")},
		// SGLang decode alone: its bootstrap split into the handshake and
		// the KV allocation wait (PR #36374's later stage names).
		{Name: "n-d0", Role: engine.Decode, Labels: pool("n")},
		// vLLM's legs behind the SGLang gateway over gRPC, which times
		// its hand-over between them and here no TTFT of its own.
		{Name: "g-p0", Role: engine.Prefill, Labels: pool("g")},
		{Name: "g-d0", Role: engine.Decode, Labels: pool("g")},
		{Name: "g-gw", Role: engine.Router, Engine: engine.SGLangGateway, Labels: pool("g")},
	}
	// Per second, each histogram gains 4 observations of the mean given.
	means := map[string]map[engine.Metric]float64{
		"v-p0": {engine.QueueTime: 0.2, engine.PrefillTime: 0.5, engine.TTFT: 0.75},
		"v-d0": {engine.KVXferTime: 0.12, engine.ITL: 0.025, engine.TTFT: 1.1},
		// SGLang: its per-stage waiting takes precedence over queue time.
		"s-p0": {engine.StageWaiting: 0.3, engine.QueueTime: 9, engine.StageForward: 0.4, engine.StageBootstrap: 0.05, engine.StageKVTransfer: 0.08},
		"n-d0": {engine.StageBootstrap: 0.04, engine.StageAllocWait: 0.06},
		"g-p0": {engine.TTFT: 0.6},
		"g-d0": {engine.TTFT: 0.2},
		"g-gw": {engine.HandoverTime: 0.03, engine.PrefillLegTime: 0.65},
	}
	l := New(Config{Interval: time.Second, Window: 5 * time.Second})
	l.SetTargets(targets)
	var p Point
	for s := 0.0; s <= 6; s++ {
		for _, tg := range targets {
			o := &engine.Observation{Engine: engine.VLLM, Role: tg.Role}
			for m, mean := range means[tg.Name] {
				n := 4 * s
				o.Histograms[m.HistogramIndex()] = engine.Histogram{
					Buckets: []engine.Bucket{{UpperBound: 10, Count: n}, {UpperBound: math.Inf(1), Count: n}},
					Sum:     mean * n, Count: n, HasSum: true, HasCount: true, Present: true,
				}
			}
			l.Record(Scrape{Target: tg.Name, Time: at(s), Obs: o})
		}
		p = l.Tick(at(s))
	}
	v, ok := p.Pool("v")
	if !ok {
		t.Fatalf("no pool v: %+v", p.Pools)
	}
	wantVal(t, "v queue", v.Phases.Queue, 0.2)
	wantVal(t, "v prefill", v.Phases.Prefill, 0.5)
	wantAbsent(t, "v bootstrap", v.Phases.Bootstrap, "SGLang's per-stage bootstrap")
	wantVal(t, "v transfer", v.Phases.Transfer, 0.12)
	wantVal(t, "v first decode step", v.Phases.FirstDecode, 0.025)
	// The whole request's TTFT: the prefill leg's mean plus the decode
	// leg's, never the decode leg's alone; what the phases leave of it
	// is untimed.
	wantVal(t, "v ttft (the legs')", v.Phases.TTFT, 0.75+1.1)
	if v.Phases.TTFTSource != "prefill leg + decode leg" {
		t.Errorf("v ttft source %q", v.Phases.TTFTSource)
	}
	wantVal(t, "v untimed", v.Phases.Untimed, 0.75+1.1-(0.2+0.5+0.12+0.025))

	s, _ := p.Pool("s")
	wantVal(t, "s queue", s.Phases.Queue, 0.3)
	wantVal(t, "s prefill", s.Phases.Prefill, 0.4)
	wantVal(t, "s bootstrap", s.Phases.Bootstrap, 0.05)
	wantVal(t, "s transfer", s.Phases.Transfer, 0.08)
	wantAbsent(t, "s first decode step", s.Phases.FirstDecode, "no decode instance")
	wantAbsent(t, "s ttft", s.Phases.TTFT, "TTFT histogram")
	wantAbsent(t, "s untimed", s.Phases.Untimed, "no TTFT of the whole request")

	// Each request is observed in both halves: the phase is the sum of
	// their means (0.1 s), not their pooled mean (0.05 s).
	n, _ := p.Pool("n")
	wantVal(t, "n bootstrap (handshake + allocation wait)", n.Phases.Bootstrap, 0.1)

	// The hand-over lies between the legs: in the TTFT and in the phases,
	// so that nothing of it is left untimed; the router's own prefill leg
	// is beside them.
	g, _ := p.Pool("g")
	wantVal(t, "g hand-over", g.Phases.Handover, 0.03)
	wantVal(t, "g ttft (the legs' and the hand-over)", g.Phases.TTFT, 0.6+0.03+0.2)
	if g.Phases.TTFTSource != "prefill leg + hand-over + decode leg" {
		t.Errorf("g ttft source %q", g.Phases.TTFTSource)
	}
	wantVal(t, "g router's prefill leg", g.Phases.PrefillLeg, 0.65)
	b, _ := l.PoolBuckets("g")
	if rt := b.Request.RouterTime; len(rt) != 3 || len(rt[2]) != 1 || rt[2][0].Count < 4 || math.Abs(rt[2][0].Sum/rt[2][0].Count-0.03) > 1e-9 {
		t.Errorf("g: the whole request's router time %+v, want the gateway's hand-over over the window", rt)
	}
}

// The SLO's phase histograms (Buckets) read each instance's phases from
// the same first source as the pools' TTFT phases: SGLang's per-stage
// waiting rather than its queue time, never both, and its bootstrap.
func TestBucketsReadPhasesOnce(t *testing.T) {
	l := New(Config{Interval: time.Second, Window: 5 * time.Second})
	l.SetTargets([]engine.Target{{Name: "s-p0", Role: engine.Prefill}, {Name: "v-p0", Role: engine.Prefill}})
	means := map[string]map[engine.Metric]float64{
		"s-p0": {engine.StageWaiting: 0.3, engine.QueueTime: 9, engine.StageBootstrap: 0.05},
		"v-p0": {engine.QueueTime: 0.2},
	}
	for s := 0.0; s <= 6; s++ {
		for name, ms := range means {
			o := &engine.Observation{Engine: engine.SGLang, Role: engine.Prefill}
			for m, mean := range ms {
				n := 4 * s
				o.Histograms[m.HistogramIndex()] = engine.Histogram{
					Buckets: []engine.Bucket{{UpperBound: 10, Count: n}, {UpperBound: math.Inf(1), Count: n}},
					Sum:     mean * n, Count: n, HasSum: true, HasCount: true, Present: true,
				}
			}
			l.Record(Scrape{Target: name, Time: at(s), Obs: o})
		}
		l.Tick(at(s))
	}
	b, ok := l.Buckets()
	if !ok {
		t.Fatal("no buckets")
	}
	if len(b.Prefill.Queue) != 2 {
		t.Fatalf("%d queue histograms, want one per instance", len(b.Prefill.Queue))
	}
	var means2 []float64
	for _, h := range b.Prefill.Queue {
		means2 = append(means2, h.Sum/h.Count)
	}
	if !(near(means2[0], 0.3) && near(means2[1], 0.2) || near(means2[0], 0.2) && near(means2[1], 0.3)) {
		t.Errorf("queue means %v, want 0.3 (SGLang's waiting stage) and 0.2", means2)
	}
	if len(b.Prefill.Bootstrap) != 1 || !near(b.Prefill.Bootstrap[0].Sum/b.Prefill.Bootstrap[0].Count, 0.05) {
		t.Errorf("bootstrap %+v, want SGLang's 0.05 s", b.Prefill.Bootstrap)
	}
}
