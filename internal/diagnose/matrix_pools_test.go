package diagnose_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/sim"
)

// Cells of the scenario matrix for pools and prefix hits (docs/sim.md),
// checked against the load model as TestVerdictMatrix checks its cells:
// each group's verdict at every checkpoint after the warm-up is compared
// with the load model's bottleneck for that group.

// flavourNamed is the matrix's flavour of that name.
func flavourNamed(t *testing.T, name string) flavour {
	t.Helper()
	for _, f := range flavours {
		if f.name == name {
			return f
		}
	}
	t.Fatalf("no flavour %q", name)
	return flavour{}
}

// TestMatrixPoolsLimitedByDifferentStages: on each engine, two pools of
// that engine in one scenario, serving different models with different
// B_request: one prefill-bound, the other decode-bound. Each pool's verdict
// in verdict.groups names its own pool's stage, as the load model has it,
// in at least 80% of the checkpoints, and the deployment is mixed.
// (TestPoolsOfOneEngine covers vLLM with NIXL.)
func TestMatrixPoolsLimitedByDifferentStages(t *testing.T) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for i, name := range []string{"vllm-flagcx", "sglang", "trtllm"} {
		f := flavourNamed(t, name)
		a := group(f, "llama", simPrefill, 1, false)
		a.Model = "meta-llama/Llama-3.1-8B-Instruct"
		b := group(f, "qwen", simDecode, 1, false)
		b.Model, b.KVBytesPerRequest = "Qwen/Qwen2.5-7B-Instruct", sim.LlamaKVBytes/2
		sc := scenario(name+" pools prefill+decode", a, b)
		load := sc.LoadModel()
		if load.Bottleneck != sim.Mixed || load.Groups[0].Bottleneck != simPrefill || load.Groups[1].Bottleneck != simDecode {
			t.Fatalf("%s: load model %+v, want llama prefill-bound and qwen decode-bound", name, load)
		}
		for _, g := range load.Groups {
			if g.Utilisation < 1.1 {
				t.Fatalf("%s: group %s too close to saturation for a clear truth: %+v", name, g.Group, g.Stages)
			}
		}
		pool := map[string]string{"llama": a.Model, "qwen": b.Model}
		own := map[string]kvsize.Request{a.Model: {Bytes: sim.LlamaKVBytes}, b.Model: {Bytes: sim.LlamaKVBytes / 2}}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			var mu sync.Mutex
			checks, mixed, hits := 0, 0, map[string]int{}
			var wrong []string
			err := run{sc: sc, seed: int64(40 + i), duration: 150 * time.Second, warmUp: 70 * time.Second, every: 5 * time.Second, pools: own,
				check: func(c checkpoint) {
					mu.Lock()
					defer mu.Unlock()
					checks++
					if c.verdict.Class == diagnose.Mixed {
						mixed++
					}
					for _, gl := range c.truth.Groups {
						gv, err := groupVerdict(c.verdict, pool[gl.Group])
						if err != nil {
							wrong = append(wrong, fmt.Sprintf("%v: %v", c.at, err))
							continue
						}
						if stageOf(gv.Class) == gl.Bottleneck {
							hits[gl.Group]++
						} else {
							wrong = append(wrong, fmt.Sprintf("%v: pool %s: %s, truth %s: %q", c.at, gv.Group, gv.Class, gl.Bottleneck, gv.Evidence))
						}
					}
				}}.do()
			if err != nil {
				t.Errorf("%s: %v", name, err)
				return
			}
			for g := range pool {
				if 5*hits[g] < 4*checks {
					t.Errorf("%s: pool of group %s names its own stage in %d of %d checkpoints; wrong: %q", name, g, hits[g], checks, wrong)
				}
			}
			if 5*mixed < 4*checks {
				t.Errorf("%s: deployment mixed in %d of %d checkpoints", name, mixed, checks)
			}
		}()
	}
	wg.Wait()
}

// TestMatrixPrefixHitsBalanced: a balanced group where half the requests
// hit half their prompt in decode's prefix cache moves 25% fewer bytes than
// B_request per request, so KV bytes ÷ B_request falls below the requests
// while nothing is wrong. On every connector that counts transfers the
// verdict stays balanced (the load model's truth) in at least 90% of the
// checkpoints, says what the KV curve is (bytes ÷ B_request, not a request
// count) beside it, and the ledger's transfers/s keep pace with prefill.
func TestMatrixPrefixHitsBalanced(t *testing.T) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	// TensorRT-LLM's simulated engines export no KV byte counter here.
	for i, name := range []string{"vllm-flagcx", "vllm-nixl", "sglang"} {
		f := flavourNamed(t, name)
		g := group(f, f.engine, sim.StageNone, 1, false)
		g.PrefixHit = sim.PrefixHitSpec{Fraction: 0.5}
		sc := scenario(name+" 50% prefix hits, balanced", g)
		load := sc.LoadModel()
		if gl := load.Groups[0]; gl.Bottleneck != sim.StageNone || gl.Utilisation >= 0.7 {
			t.Fatalf("%s: load model %+v, want balanced below 70%%", name, gl)
		}
		mean := g.MeanTransferBytes(sc) / float64(sc.KVBytesPerRequest)
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			checks, balanced, said := 0, 0, 0
			var wrong []string
			var pts []ledger.Point
			err := run{sc: sc, seed: int64(60 + i), duration: 150 * time.Second, warmUp: 50 * time.Second, every: 5 * time.Second, keep: &pts,
				check: func(c checkpoint) {
					checks++
					gv, err := groupVerdict(c.verdict, f.engine)
					if err != nil {
						wrong = append(wrong, err.Error())
						return
					}
					if stageOf(gv.Class) == c.truth.Groups[0].Bottleneck {
						balanced++
					} else {
						wrong = append(wrong, fmt.Sprintf("%v: %s %q", c.at, gv.Class, gv.Evidence))
					}
					for _, n := range gv.Notes {
						if strings.Contains(n, "off B_request") && strings.Contains(n, "bytes ÷ B_request") {
							said++
							break
						}
					}
				}}.do()
			if err != nil {
				t.Errorf("%s: %v", name, err)
				return
			}
			if 10*balanced < 9*checks {
				t.Errorf("%s: balanced in %d of %d checkpoints; wrong: %q", name, balanced, checks, wrong)
			}
			if 10*said < 9*checks {
				t.Errorf("%s: the KV curve is said to be bytes ÷ B_request in %d of %d checkpoints", name, said, checks)
			}
			// Over the last minute: KV req/s (bytes ÷ B_request) runs at the
			// mean transfer's share of prefill, transfers/s with prefill.
			var kv, xfer, prefill float64
			for _, p := range pts[len(pts)-60:] {
				if !p.KV.Window.OK() || !p.KV.Transfers.OK() || !p.Prefill.Window.OK() {
					t.Errorf("%s at %v: KV %+v, transfers %+v, prefill %+v", name, p.Time, p.KV.Window, p.KV.Transfers, p.Prefill.Window)
					return
				}
				kv, xfer, prefill = kv+p.KV.Window.V, xfer+p.KV.Transfers.V, prefill+p.Prefill.Window.V
			}
			if r := kv / prefill; r < mean-0.08 || r > mean+0.08 {
				t.Errorf("%s: KV req/s ÷ prefill req/s = %.3f, want the mean transfer's %.3f × B_request", name, r, mean)
			}
			if r := xfer / prefill; r < 0.92 || r > 1.08 {
				t.Errorf("%s: transfers/s ÷ prefill req/s = %.3f, want 1", name, r)
			}
		}()
	}
	wg.Wait()
}

// TestMatrixPoolsPrefixHitsOwnBRequest: two balanced pools of one engine
// with their own B_request, one with 50% prefix hits. Each pool's bytes per
// transfer is set against its own B_request: the pool with hits is told
// that KV req/s is bytes ÷ B_request, with its own figure (25% under), and
// the pool without hits, whose transfers carry exactly its B_request, is
// not. Against the deployment's mixture both were told, with one number.
func TestMatrixPoolsPrefixHitsOwnBRequest(t *testing.T) {
	f := flavourNamed(t, "vllm-flagcx")
	a := group(f, "llama", sim.StageNone, 1, false)
	a.Model, a.PrefixHit = "meta-llama/Llama-3.1-8B-Instruct", sim.PrefixHitSpec{Fraction: 0.5}
	b := group(f, "qwen", sim.StageNone, 1, false)
	b.Model, b.KVBytesPerRequest = "Qwen/Qwen2.5-7B-Instruct", sim.LlamaKVBytes/2
	sc := scenario("pools, 50% prefix hits in one", a, b)
	for _, g := range sc.LoadModel().Groups {
		if g.Bottleneck != sim.StageNone || g.Utilisation >= 0.7 {
			t.Fatalf("load model: %+v, want both pools balanced", g)
		}
	}
	own := map[string]kvsize.Request{a.Model: {Bytes: sim.LlamaKVBytes}, b.Model: {Bytes: sim.LlamaKVBytes / 2}}
	checks, balanced := 0, map[string]int{}
	notes := map[string][]string{}
	err := run{sc: sc, seed: 5, duration: 150 * time.Second, warmUp: 50 * time.Second, every: 5 * time.Second, pools: own,
		check: func(c checkpoint) {
			checks++
			for _, m := range []string{a.Model, b.Model} {
				gv, err := groupVerdict(c.verdict, m)
				if err != nil {
					t.Fatal(err)
				}
				if gv.Class == diagnose.Balanced {
					balanced[m]++
				}
				for _, n := range gv.Notes {
					if strings.Contains(n, "off B_request") {
						notes[m] = append(notes[m], n)
					}
				}
			}
		}}.do()
	if err != nil {
		t.Fatal(err)
	}
	for m, n := range balanced {
		if 10*n < 9*checks {
			t.Errorf("pool %s balanced in %d of %d checkpoints", m, n, checks)
		}
	}
	if len(notes[b.Model]) > 0 {
		t.Errorf("pool %s, without prefix hits, told its transfers are off B_request: %q", b.Model, notes[b.Model][0])
	}
	if 10*len(notes[a.Model]) < 9*checks {
		t.Errorf("pool %s, with prefix hits, told in %d of %d checkpoints", a.Model, len(notes[a.Model]), checks)
	}
	// Its own figure, 25% under on average; the mixture with the other
	// pool's half-size transfers would be 37.5% under.
	sum := 0.0
	for _, n := range notes[a.Model] {
		var gb, pct float64
		if _, err := fmt.Sscanf(n, "one KV transfer carries %g GB on average, %g%%", &gb, &pct); err != nil {
			t.Fatalf("pool %s: %q: %v", a.Model, n, err)
		}
		sum += pct
	}
	if mean := sum / float64(max(len(notes[a.Model]), 1)); mean < -31 || mean > -19 {
		t.Errorf("pool %s: transfers %.1f%% off B_request on average, want its own −25%%", a.Model, mean)
	}
}
