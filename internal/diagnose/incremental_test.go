package diagnose_test

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/sim"
)

// tickRun is a simulated run's points, tick by tick, with the targets'
// metadata at each and the pools' own B_request (nil: grouped by engine).
type tickRun struct {
	name  string
	pts   []ledger.Point
	metas []map[string]ledger.TargetMeta
	own   map[string]kvsize.Request
}

func recordTicks(t *testing.T, name string, r run) tickRun {
	t.Helper()
	tr := tickRun{name: name, own: r.pools}
	r.tick = func(p ledger.Point, meta map[string]ledger.TargetMeta) {
		tr.pts = append(tr.pts, p)
		tr.metas = append(tr.metas, meta)
	}
	if err := r.do(); err != nil {
		t.Fatal(err)
	}
	return tr
}

// streamRuns are deployments whose points take every path of the
// verdict: restarts (held verdicts), flaky scrapes, TensorRT-LLM's
// iteration statistics, pools of their own B_request, a router, a group
// without KV bytes.
func streamRuns(t *testing.T) []tickRun {
	d := 150 * time.Second
	restart, err := sim.LoadScenario("restart")
	if err != nil {
		t.Fatal(err)
	}
	trt, err := sim.LoadScenario("trtllm")
	if err != nil {
		t.Fatal(err)
	}
	f := flavourNamed(t, "vllm-nixl")
	a := group(f, "llama", simPrefill, 1, false)
	a.Model = "meta-llama/Llama-3.1-8B-Instruct"
	b := group(f, "qwen", simDecode, 1, false)
	b.Model, b.KVBytesPerRequest = "Qwen/Qwen2.5-7B-Instruct", sim.LlamaKVBytes/2
	b.Router, b.DecodeOnlyFraction = string(engine.LLMDEPP), 0.3
	pools := scenario("two pools, one behind a router", a, b)
	pools.Restarts = []sim.Restart{{Instance: "llama-p0", At: 70 * time.Second, Down: 4 * time.Second}, {Instance: "qwen-d1", At: 110 * time.Second, Down: 3 * time.Second}}
	sgl := group(flavourNamed(t, "sglang"), "sglang", simKV, 1, false)
	mixedKV := scenario("a group without KV bytes", group(f, "vllm", sim.StageNone, 1, false), sgl)
	return []tickRun{
		recordTicks(t, "restart", run{sc: restart, seed: 3, duration: d}),
		recordTicks(t, "trtllm flaky", run{sc: trt, seed: 4, duration: d, iterStats: true, flaky: 0.1}),
		recordTicks(t, "pools", run{sc: pools, seed: 5, duration: d, pools: map[string]kvsize.Request{
			a.Model: {Bytes: sim.LlamaKVBytes}, b.Model: {Bytes: sim.LlamaKVBytes / 2}}}),
		recordTicks(t, "no KV", run{sc: mixedKV, seed: 6, duration: d, noKV: map[string]bool{"sglang": true}}),
		{name: "restart world", pts: restartWorld(150)},
	}
}

// restartWorld is a verdict that a restart's window must hold: one
// prefill and one decode instance, 4 req/s through both; prefill waiting
// grows by 2/s until p0 goes down at 60 s for 3 s, and stays short after
// (hold_test.go's world, with a second prefill instance that carries the
// KV bytes of every request).
func restartWorld(n int) []ledger.Point {
	pts := make([]ledger.Point, n)
	for i := range pts {
		p := &pts[i]
		p.Time = epoch.Add(time.Duration(i) * time.Second)
		down := i >= 60 && i < 63
		wait := float64(2 * i)
		if i >= 60 {
			wait = float64(i % 2)
		}
		noKV := ledger.Absent("no KV")
		kv := 4.1 * float64(sim.LlamaKVBytes) // all of prefill's requests
		p0 := ledger.InstancePoint{Target: "p0", Role: "prefill", Engine: "vllm", Up: !down,
			Instant: ledger.Val(4), Window: ledger.Val(4), Waiting: ledger.Val(wait), Running: ledger.Val(4),
			KVBytes: noKV, KVBytesW: noKV, KVUsage: ledger.Val(0.2)}
		if down {
			why := ledger.Absent("down: connection refused")
			p0.Instant, p0.Window, p0.Waiting, p0.Running, p0.KVUsage = why, why, why, why, why
		}
		p1 := ledger.InstancePoint{Target: "p1", Role: "prefill", Engine: "vllm", Up: true,
			Instant: ledger.Val(0.1), Window: ledger.Val(0.1), Waiting: ledger.Val(0), Running: ledger.Val(1),
			KVBytes: ledger.Val(kv), KVBytesW: ledger.Val(kv), KVUsage: ledger.Val(0.1)}
		d0 := ledger.InstancePoint{Target: "d0", Role: "decode", Engine: "vllm", Up: true,
			Instant: ledger.Val(4), Window: ledger.Val(4), Waiting: ledger.Val(1), Running: ledger.Val(float64(20 + i%7)),
			KVBytes: noKV, KVBytesW: noKV, KVUsage: ledger.Val(0.3)}
		p.Instances = []ledger.InstancePoint{p0, p1, d0}
		p.Prefill.Instant, p.Decode.Instant = ledger.Val(4.1), ledger.Val(4)
	}
	return pts
}

// mutation changes a run's points (copies of them) to what a simulated
// run does not show by itself.
type mutation struct {
	name string
	// apply returns the points to feed; configs, when set, is the
	// configuration to switch to before some points (by index).
	apply func(rng *rand.Rand, pts []ledger.Point) []ledger.Point
	// configs switch the configuration at random points.
	configs bool
}

// withInstances is p with its own copy of the instances, for editing.
func withInstances(p ledger.Point) ledger.Point {
	p.Instances = slices.Clone(p.Instances)
	return p
}

// targetsOf lists the targets of pts, sorted.
func targetsOf(pts []ledger.Point) []string {
	var out []string
	for i := range pts {
		for _, ip := range pts[i].Instances {
			if !slices.Contains(out, ip.Target) {
				out = append(out, ip.Target)
			}
		}
	}
	slices.Sort(out)
	return out
}

// span is a random run of points [from, to) of n.
func span(rng *rand.Rand, n int) (int, int) {
	from := rng.IntN(n)
	return from, min(n, from+1+rng.IntN(50))
}

var mutations = []mutation{
	{name: "as recorded", apply: func(_ *rand.Rand, pts []ledger.Point) []ledger.Point { return pts }},
	{name: "KV exporters appear and leave mid-window", apply: func(rng *rand.Rand, pts []ledger.Point) []ledger.Point {
		out := slices.Clone(pts)
		targets := targetsOf(pts)
		for range 4 {
			target := targets[rng.IntN(len(targets))]
			from, to := span(rng, len(out))
			// Outside [from, to) the instance reads no KV bytes.
			for i := range out {
				if i >= from && i < to {
					continue
				}
				out[i] = withInstances(out[i])
				for j := range out[i].Instances {
					if ip := &out[i].Instances[j]; ip.Target == target {
						ip.KVBytes, ip.KVBytesW = ledger.Absent("not exported yet"), ledger.Absent("not exported yet")
					}
				}
			}
		}
		return out
	}},
	{name: "instances vanish and come back", apply: func(rng *rand.Rand, pts []ledger.Point) []ledger.Point {
		out := slices.Clone(pts)
		targets := targetsOf(pts)
		for range 6 {
			target := targets[rng.IntN(len(targets))]
			from, to := span(rng, len(out))
			for i := from; i < to; i++ {
				out[i] = withInstances(out[i])
				out[i].Instances = slices.DeleteFunc(out[i].Instances, func(ip ledger.InstancePoint) bool { return ip.Target == target })
			}
		}
		return out
	}},
	{name: "instances down, one never up, one listed twice", apply: func(rng *rand.Rand, pts []ledger.Point) []ledger.Point {
		out := slices.Clone(pts)
		targets := targetsOf(pts)
		never := targets[rng.IntN(len(targets))]
		twice := targets[rng.IntN(len(targets))]
		for i := range out {
			out[i] = withInstances(out[i])
			for j := range out[i].Instances {
				ip := &out[i].Instances[j]
				switch {
				case ip.Target == never:
					ip.Up = false
				case rng.IntN(40) == 0:
					ip.Up = !ip.Up
				}
			}
			for j := range out[i].Instances {
				if ip := out[i].Instances[j]; ip.Target == twice && rng.IntN(10) == 0 {
					ip.Up = !ip.Up
					out[i].Instances = append(out[i].Instances, ip)
					break
				}
			}
		}
		return out
	}},
	{name: "gaps and repeated times", apply: func(rng *rand.Rand, pts []ledger.Point) []ledger.Point {
		var out []ledger.Point
		for i := 0; i < len(pts); i++ {
			switch rng.IntN(25) {
			case 0: // a gap longer than a window
				i += 10 + rng.IntN(40)
			case 1: // a tick at the time of the one before
				if len(out) > 0 {
					p := pts[i]
					p.Time = out[len(out)-1].Time
					out = append(out, p)
					continue
				}
			}
			if i < len(pts) {
				out = append(out, pts[i])
			}
		}
		return out
	}},
	{name: "configuration changes", configs: true, apply: func(_ *rand.Rand, pts []ledger.Point) []ledger.Point { return pts }},
}

// byParity groups instances by their target's hash: groups that cut
// across engines and pools.
func byParity(ip *ledger.InstancePoint) string {
	h := fnv.New32a()
	h.Write([]byte(ip.Target))
	return fmt.Sprintf("half-%d", h.Sum32()%2)
}

// TestStreamIsDiagnose feeds simulated runs, and edits of them, to a
// Stream one tick at a time as the recorder does, and after every tick
// holds its verdict to Diagnose's over the points the recorder kept for
// it (two windows and an interval), field by field.
func TestStreamIsDiagnose(t *testing.T) {
	runs := streamRuns(t)
	const interval = time.Second
	keep := 2*diagnose.DefaultWindow + interval
	held := map[string]int{}
	for ri, tr := range runs {
		for mi, mu := range mutations {
			if raceDetector && mi != 0 && mi != 1+ri%(len(mutations)-1) {
				continue // a sample: each run as recorded and edited one way
			}
			t.Run(tr.name+"/"+mu.name, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(ri), uint64(mi)))
				pts := mu.apply(rng, tr.pts)
				// Each point's metadata: the recorder passes it when it
				// changed.
				metaAt := map[time.Time]map[string]ledger.TargetMeta{}
				for i := range tr.metas {
					metaAt[tr.pts[i].Time] = tr.metas[i]
				}
				base := diagnose.Config{Window: diagnose.DefaultWindow, BytesPerRequest: float64(sim.LlamaKVBytes)}
				pooled := func(meta map[string]ledger.TargetMeta) diagnose.Config {
					if tr.own == nil {
						return base
					}
					return base.ByPool(meta, tr.own, kvsize.Request{})
				}
				configs := []func(meta map[string]ledger.TargetMeta) diagnose.Config{
					pooled,
					func(map[string]ledger.TargetMeta) diagnose.Config { return diagnose.Config{} },
					func(map[string]ledger.TargetMeta) diagnose.Config {
						return diagnose.Config{Window: 10 * time.Second, MinSamples: 5, GroupOf: byParity, BytesPerRequest: float64(sim.LlamaKVBytes) / 3}
					},
					func(meta map[string]ledger.TargetMeta) diagnose.Config {
						c := pooled(meta)
						c.BytesOf = func(g string) (float64, string) {
							if strings.HasPrefix(g, "Qwen") {
								return 0, "no B_request for " + g
							}
							return float64(sim.LlamaKVBytes), ""
						}
						return c
					},
				}
				which := 0
				cfg := configs[which](nil)
				s := diagnose.NewStream(cfg, keep)
				var recent []ledger.Point
				var lastMeta map[string]ledger.TargetMeta
				grouped, judged := 0, 0
				for i, p := range pts {
					meta := metaAt[p.Time]
					changed := meta != nil && !reflect.DeepEqual(meta, lastMeta)
					if mu.configs && rng.IntN(15) == 0 {
						which, changed = rng.IntN(len(configs)), true
					}
					if changed {
						if meta != nil {
							lastMeta = meta
						}
						cfg = configs[which](lastMeta)
						s.SetConfig(cfg)
					}
					s.Observe(p)
					recent = append(recent, p)
					cut := 0
					for cut < len(recent) && !recent[cut].Time.After(p.Time.Add(-keep)) {
						cut++
					}
					recent = append(recent[:0], recent[cut:]...)
					got, want := s.Verdict(), diagnose.Diagnose(recent, cfg)
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("point %d at %s: the stream's verdict\n%+v\nDiagnose's\n%+v", i, p.Time.Format(time.TimeOnly), got, want)
					}
					if want.Class != diagnose.Insufficient {
						judged++
					}
					grouped += len(want.Groups)
					for _, g := range want.Groups {
						for _, n := range g.Notes {
							if strings.HasPrefix(n, "held across the restart") {
								held[tr.name]++
							}
						}
					}
				}
				t.Logf("%d points, %d verdicts judged, %d group verdicts", len(pts), judged, grouped)
				if judged == 0 || grouped == 0 {
					t.Errorf("no verdict judged a group: the comparison proves nothing")
				}
			})
		}
	}
	// The held verdicts are the one path that reads points older than
	// the window.
	t.Logf("group verdicts held across a restart, by run: %v", held)
	if held["restart world"] == 0 {
		t.Errorf("no group verdict held across a restart: %v", held)
	}
}
