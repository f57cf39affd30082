package diagnose_test

import (
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/sim"
)

// TestVerdictOnOtherClusters runs deployments shaped unlike the matrix
// cells (other prompt and output lengths, B_request, batch sizes, three
// groups, a restart in the middle of a saturated run) and checks the
// deployment verdict against the load model at every checkpoint after the
// warm-up.
func TestVerdictOnOtherClusters(t *testing.T) {
	base := func(name string, groups ...sim.Group) sim.Scenario {
		return sim.Scenario{Name: name, Model: "Qwen/Qwen3-8B", InputTokens: 4096, OutputTokens: 384,
			KVBytesPerRequest: 600 << 20, StopFraction: 0.5, Groups: groups}
	}
	g := func(name, eng, conn string, rate float64, p, d int) sim.Group {
		return sim.Group{Name: name, Engine: eng, Connector: conn, Rate: rate,
			Prefill:  sim.PrefillSpec{Instances: p, DP: 1, TokensPerSec: 16384, MaxBatch: 8, KVSlots: 48},
			Transfer: sim.TransferSpec{BandwidthBytesPerSec: 12 * float64(1<<30), Threads: 2},
			Decode:   sim.DecodeSpec{Instances: d, DP: 1, StepTime: 20 * time.Millisecond, MaxBatch: 48, KVSlots: 96}}
	}
	cases := []struct {
		name    string
		sc      func() sim.Scenario
		iter    bool
		want    diagnose.Class
		restart bool
	}{
		{"vLLM NIXL with one small, slow decode instance", func() sim.Scenario {
			x := g("vllm", string(engine.VLLM), sim.ConnectorNIXL, 1.6, 1, 1)
			x.Decode.MaxBatch, x.Decode.StepTime = 8, 40*time.Millisecond
			return base("slow-decode", x)
		}, false, diagnose.DecodeBound, false},
		{"vLLM FlagCX, SGLang and TensorRT-LLM all under capacity", func() sim.Scenario {
			a := g("vllm", string(engine.VLLM), sim.ConnectorFlagCX, 4, 2, 2)
			b := g("sglang", string(engine.SGLang), "", 2.5, 1, 1)
			c := g("trt", string(engine.TensorRTLLM), "", 3, 1, 1)
			c.Prefill.DP = 2
			return base("three-balanced", a, b, c)
		}, false, diagnose.Balanced, false},
		{"KV-limited FlagCX group whose prefill p0 restarts at 35 s", func() sim.Scenario {
			a := g("vllm", string(engine.VLLM), sim.ConnectorFlagCX, 7, 2, 2)
			a.Transfer.BandwidthBytesPerSec = 1.6 * float64(1<<30) // 2 × 2.7 req/s
			sc := base("kv-restart", a)
			sc.Restarts = []sim.Restart{{Instance: "vllm-p0", At: 35 * time.Second, Down: 4 * time.Second}}
			return sc
		}, false, diagnose.KVBound, true},
		{"FlagCX with DP 2 and slow links", func() sim.Scenario {
			a := g("vllm", string(engine.VLLM), sim.ConnectorFlagCX, 5, 1, 2)
			a.Prefill.DP = 2
			a.Transfer.BandwidthBytesPerSec = 1.2 * float64(1<<30)
			return base("dp2-slow-links", a)
		}, false, diagnose.KVBound, false},
		{"SGLang prefill-limited", func() sim.Scenario {
			a := g("sglang", string(engine.SGLang), "", 5, 1, 2)
			return base("sglang-prefill", a)
		}, false, diagnose.PrefillBound, false},
		{"TensorRT-LLM with iteration stats, decode-limited, beside a balanced SGLang group", func() sim.Scenario {
			a := g("trt", string(engine.TensorRTLLM), "", 3, 1, 1)
			a.Decode.MaxBatch = 16
			b := g("sglang", string(engine.SGLang), "", 2, 1, 1)
			return base("trt-decode", a, b)
		}, true, diagnose.DecodeBound, false},
	}
	for i, tc := range cases {
		if raceDetector && i%3 != 0 {
			continue // a sample under the race detector; scripts/test.sh runs all without it
		}
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sc := tc.sc()
			load := sc.LoadModel()
			if got := verdictStage(load.Bottleneck); got != tc.want {
				t.Fatalf("the load model says %s (%+v); the case expects %s", load.Bottleneck, load.Groups, tc.want)
			}
			n, ok := 0, 0
			r := run{sc: sc, seed: int64(100 + i), iterStats: tc.iter, duration: 140 * time.Second,
				warmUp: 50 * time.Second, every: 5 * time.Second}
			r.check = func(cp checkpoint) {
				n++
				if cp.verdict.Class == tc.want {
					ok++
					return
				}
				t.Logf("%v: %s %q %q", cp.at, cp.verdict.Class, cp.verdict.Evidence, cp.verdict.Notes)
			}
			if err := r.do(); err != nil {
				t.Fatal(err)
			}
			if float64(ok) < 0.9*float64(n) {
				t.Errorf("deployment verdict right at %d of %d checkpoints", ok, n)
			}
		})
	}
}

// verdictStage maps the load model's deployment bottleneck onto a verdict
// class.
func verdictStage(b string) diagnose.Class {
	switch b {
	case sim.StageNone:
		return diagnose.Balanced
	case sim.Mixed:
		return diagnose.Mixed
	}
	return diagnose.Class(b)
}
