package diagnose_test

import (
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/sim"
)

// TestPoolsOfOneEngine: two vLLM pools serving different models with
// different B_request, one limited by prefill and one by decode, are
// judged each against the load model's truth for its own group, and the
// deployment is mixed. Grouped by engine kind they were one group.
func TestPoolsOfOneEngine(t *testing.T) {
	f := flavours[1] // vllm-nixl
	a := group(f, "llama", simPrefill, 1, false)
	a.Model = "meta-llama/Llama-3.1-8B-Instruct"
	b := group(f, "qwen", simDecode, 1, false)
	b.Model, b.KVBytesPerRequest = "Qwen/Qwen2.5-7B-Instruct", sim.LlamaKVBytes/2
	sc := scenario("two pools", a, b)
	pool := map[string]string{"llama": a.Model, "qwen": b.Model}
	load := sc.LoadModel()
	if load.Bottleneck != "mixed" || load.Groups[0].Bottleneck != simPrefill || load.Groups[1].Bottleneck != simDecode {
		t.Fatalf("load model: %+v, want llama prefill-bound and qwen decode-bound", load)
	}
	own := map[string]kvsize.Request{a.Model: {Bytes: sim.LlamaKVBytes}, b.Model: {Bytes: sim.LlamaKVBytes / 2}}
	checks, hits := 0, map[string]int{}
	mixed := 0
	err := run{sc: sc, seed: 7, duration: 150 * time.Second, warmUp: 70 * time.Second, every: 10 * time.Second, pools: own,
		check: func(c checkpoint) {
			checks++
			if c.verdict.Class == diagnose.Mixed {
				mixed++
			}
			for _, gl := range c.truth.Groups {
				gv, err := groupVerdict(c.verdict, pool[gl.Group])
				if err != nil {
					t.Errorf("%v: %v", c.at, err)
					continue
				}
				if string(gv.Class) == gl.Bottleneck {
					hits[gl.Group]++
				} else {
					t.Logf("%v: pool %s: %s, truth %s: %q", c.at, gv.Group, gv.Class, gl.Bottleneck, gv.Evidence)
				}
			}
		}}.do()
	if err != nil {
		t.Fatal(err)
	}
	for g := range pool {
		if 5*hits[g] < 4*checks {
			t.Errorf("pool of group %s: the truth in %d of %d checkpoints", g, hits[g], checks)
		}
	}
	if 5*mixed < 4*checks {
		t.Errorf("deployment mixed in %d of %d checkpoints", mixed, checks)
	}
}
