package diagnose_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/sim"
)

// TestMatrixDecodeOnlyBalanced is the matrix cell "40% decode-only and
// balanced": a group behind llm-d's EPP sends 40% of its requests straight
// to decode, so decode completes more than prefill with nothing wrong. For
// every flavour that can skip prefill, the pool's verdict is the load
// model's truth (none) at 90% of the checkpoints, never a stage, and its
// traffic says how many requests the router sent straight to decode.
func TestMatrixDecodeOnlyBalanced(t *testing.T) {
	for _, f := range flavours {
		if f.engine == string(engine.TensorRTLLM) {
			continue // decode-only requests are not simulated for it
		}
		t.Run(f.name, func(t *testing.T) {
			g := group(f, f.engine, sim.StageNone, 1, false)
			g.Router, g.DecodeOnlyFraction = string(engine.LLMDEPP), 0.4
			sc := scenario("40% decode-only/"+f.name, g)
			load := sc.LoadModel().Groups[0]
			if load.Bottleneck != sim.StageNone || load.Utilisation >= 0.7 {
				t.Fatalf("load model: %+v, want balanced below 70%%", load)
			}
			checks, hits, noted := 0, 0, 0
			err := run{sc: sc, seed: 21, duration: 150 * time.Second, warmUp: 50 * time.Second, every: 5 * time.Second,
				pools: map[string]kvsize.Request{sc.Model: {Bytes: sim.LlamaKVBytes}},
				check: func(c checkpoint) {
					checks++
					gv, err := groupVerdict(c.verdict, sc.Model)
					if err != nil {
						t.Errorf("%v: %v", c.at, err)
						return
					}
					if stageOf(gv.Class) == load.Bottleneck {
						hits++
					} else {
						t.Logf("%v: %s, truth %s: %q %q", c.at, gv.Class, load.Bottleneck, gv.Evidence, gv.Notes)
					}
					if gv.Class != diagnose.Balanced && gv.Class != diagnose.Insufficient {
						t.Errorf("%v: the verdict names %s: %q", c.at, gv.Class, gv.Evidence)
					}
					for _, n := range gv.Traffic {
						if strings.Contains(n, "the router sent") && strings.Contains(n, "straight to decode") {
							noted++
							break
						}
					}
				}}.do()
			if err != nil {
				t.Fatal(err)
			}
			if checks < 20 {
				t.Fatalf("%d checkpoints", checks)
			}
			t.Logf("balanced in %d and router decisions noted in %d of %d checkpoints", hits, noted, checks)
			if 10*hits < 9*checks {
				t.Errorf("the truth in %d of %d checkpoints", hits, checks)
			}
			if 10*noted < 9*checks {
				t.Errorf("router decisions noted in %d of %d checkpoints", noted, checks)
			}
		})
	}
}
