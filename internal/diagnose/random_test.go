package diagnose_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/sim"
)

// randomCluster draws one group with random sizes and a random load, kept
// only when its truth is clear: every stage below 70% utilisation, or one
// stage at or above 115% and the others below 90%.
func randomCluster(rng *rand.Rand, name string) (sim.Group, bool) {
	engines := []struct{ e, c string }{{string(engine.VLLM), sim.ConnectorFlagCX}, {string(engine.VLLM), sim.ConnectorNIXL}, {string(engine.SGLang), sim.ConnectorMooncake}, {string(engine.TensorRTLLM), sim.ConnectorUCX}}
	pick := engines[rng.IntN(len(engines))]
	g := sim.Group{Name: name, Engine: pick.e, Connector: pick.c,
		Prefill:  sim.PrefillSpec{Instances: 1 + rng.IntN(3), DP: 1 + rng.IntN(2), TokensPerSec: float64(12000 + rng.IntN(40000)), MaxBatch: 2 + rng.IntN(7)},
		Transfer: sim.TransferSpec{BandwidthBytesPerSec: float64(1+rng.IntN(12)) * float64(1<<30), Threads: 1 + rng.IntN(8)},
		Decode:   sim.DecodeSpec{Instances: 1 + rng.IntN(3), DP: 1 + rng.IntN(2), StepTime: time.Duration(10+rng.IntN(40)) * time.Millisecond, MaxBatch: 8 + rng.IntN(56)},
	}
	g.Prefill.KVSlots = g.Prefill.MaxBatch * (4 + rng.IntN(16))
	g.Decode.KVSlots = g.Decode.MaxBatch + rng.IntN(2*g.Decode.MaxBatch)
	sc := sim.Scenario{InputTokens: 8192, OutputTokens: 256, KVBytesPerRequest: sim.LlamaKVBytes, Groups: []sim.Group{g}}
	sc.Groups[0].Rate = 1
	l := sc.LoadModel().Groups[0]
	minCap := 1e9
	for _, s := range l.Stages {
		minCap = min(minCap, s.CapacityPerSec)
	}
	if rng.IntN(3) == 0 {
		g.Rate = minCap * (0.3 + 0.35*rng.Float64())
	} else {
		g.Rate = minCap * (1.15 + 0.4*rng.Float64())
	}
	sc.Groups[0] = g
	l = sc.LoadModel().Groups[0]
	for _, s := range l.Stages {
		if s.Stage != l.Bottleneck && s.Utilisation >= 0.9 {
			return g, false
		}
	}
	return g, l.Bottleneck == sim.StageNone && l.Utilisation < 0.7 || l.Bottleneck != sim.StageNone
}

// TestRandomClusters draws single-group deployments with random engines,
// sizes, links and loads (keeping those whose truth is clear) and checks
// the modal verdict of each against the load model. The cells of
// TestVerdictMatrix were tuned by hand; these were not.
func TestRandomClusters(t *testing.T) {
	want := 50
	if raceDetector {
		want = 2
	}
	rng := rand.New(rand.NewPCG(1, 7))
	n, ok := 0, 0
	conf := map[string]map[string]int{}
	for k := 0; n < want && k < 2000; k++ {
		g, clear := randomCluster(rng, "g")
		if !clear {
			continue
		}
		g.Name = g.Engine
		sc := sim.Scenario{Name: "random", Model: "m", InputTokens: 8192, OutputTokens: 256, KVBytesPerRequest: sim.LlamaKVBytes, Groups: []sim.Group{g}}
		truth := sc.LoadModel().Groups[0]
		n++
		got := map[string]int{}
		checks := 0
		r := run{sc: sc, seed: int64(k), iterStats: rng.IntN(2) == 0, duration: 150 * time.Second, warmUp: 60 * time.Second, every: 10 * time.Second}
		r.check = func(cp checkpoint) {
			checks++
			gv, err := groupVerdict(cp.verdict, g.Engine)
			if err != nil {
				got["missing"]++
				return
			}
			got[stageOf(gv.Class)]++
		}
		if err := r.do(); err != nil {
			t.Fatal(err)
		}
		if conf[truth.Bottleneck] == nil {
			conf[truth.Bottleneck] = map[string]int{}
		}
		best, bn := "", 0
		for s, c := range got {
			if c > bn {
				best, bn = s, c
			}
		}
		conf[truth.Bottleneck][best]++
		if got[truth.Bottleneck]*10 >= checks*9 {
			ok++
		} else {
			desc := ""
			for _, s := range truth.Stages {
				desc += fmt.Sprintf(" %s=%.2f", s.Stage, s.Utilisation)
			}
			t.Logf("miss: %s/%s truth %s (%s) got %v; P%dx%d D%dx%d batch %d slots %d/%d thr %d", g.Engine, g.Connector, truth.Bottleneck, desc, got,
				g.Prefill.Instances, g.Prefill.DP, g.Decode.Instances, g.Decode.DP, g.Decode.MaxBatch, g.Prefill.KVSlots, g.Decode.KVSlots, g.Transfer.Threads)
		}
	}
	t.Logf("%d of %d random clusters right; modal verdict by truth: %v", ok, n, conf)
	if float64(ok) < 0.85*float64(n) {
		t.Errorf("%d of %d random clusters right; want ≥ 85%%", ok, n)
	}
}
