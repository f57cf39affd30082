package diagnose_test

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/stage"
)

// The load model's names of the pipeline's stages (its bottleneck is one
// of them, sim.StageAdmission or sim.StageNone).
var (
	simPrefill = string(stage.Prefill)
	simKV      = string(stage.KV)
	simDecode  = string(stage.Decode)
)

// flavour is one engine/connector combination of the matrix.
type flavour struct {
	name      string
	engine    string
	connector string
	iterStats bool
	stages    []string // saturations the engine can show
}

var flavours = []flavour{
	{"vllm-flagcx", string(engine.VLLM), sim.ConnectorFlagCX, false, []string{sim.StageNone, simPrefill, simKV, simDecode}},
	{"vllm-nixl", string(engine.VLLM), sim.ConnectorNIXL, false, []string{sim.StageNone, simPrefill, simKV, simDecode}},
	{"sglang", string(engine.SGLang), sim.ConnectorMooncake, false, []string{sim.StageNone, simPrefill, simKV, sim.StageAdmission, simDecode}},
	{"trtllm", string(engine.TensorRTLLM), sim.ConnectorUCX, false, []string{sim.StageNone, simPrefill, simKV, simDecode}},
	{"trtllm-iterstats", string(engine.TensorRTLLM), sim.ConnectorUCX, true, []string{sim.StageNone, simPrefill, simKV, simDecode}},
}

// group sizes one group so that `stage` saturates (utilisation ≈ 1.25) and
// every other stage stays well below it; "none" keeps all below 0.7. The
// load follows from capacities (see sim.Scenario.LoadModel), and the test
// checks the model agrees before using a cell.
func group(f flavour, name, stage string, dp int, big bool) sim.Group {
	g := sim.Group{
		Name: name, Engine: f.engine, Connector: f.connector,
		Prefill:  sim.PrefillSpec{Instances: 2, DP: dp, TokensPerSec: 24576, MaxBatch: 4, KVSlots: 60},
		Transfer: sim.TransferSpec{BandwidthBytesPerSec: 8 * float64(1<<30), Threads: 4},
		Decode:   sim.DecodeSpec{Instances: 2, DP: dp, StepTime: 25 * time.Millisecond, MaxBatch: 32, KVSlots: 60},
	}
	if f.engine == string(engine.TensorRTLLM) {
		// One iteration-stats record per 10 iterations, as deployments
		// set iter_perf_stats_interval; skipped iterations carry over.
		g.TRTLLM.IterStatsInterval = 10
	}
	if big {
		// Fewer, larger engines (tensor parallel): twice the compute each.
		g.Prefill.Instances, g.Decode.Instances = 1, 1
		g.Prefill.TokensPerSec *= 2
		g.Decode.StepTime /= 2
	}
	nP := float64(g.Prefill.Instances * dp)
	nD := float64(g.Decode.Instances * dp)
	cp := nP * g.Prefill.TokensPerSec / 8192
	switch stage {
	case sim.StageNone:
		g.Rate = 0.6 * cp
	case simPrefill:
		g.Rate = 1.25 * cp
		g.Decode.Instances *= 2
	case simKV:
		g.Transfer.BandwidthBytesPerSec = 0.5 * cp / nP * float64(1<<30) // KV capacity = cp/2
		g.Rate = 0.625 * cp
	case simDecode:
		g.Decode.MaxBatch = 8 // capacity nD × 8 ÷ (256 × step) = cp/2 at the defaults
		g.Decode.StepTime = time.Duration(float64(time.Second) * nD * 8 / (256 * 0.5 * cp))
		g.Rate = 0.625 * cp
	case sim.StageAdmission:
		// Decode KV slots = batch, reserved through prefill, a 1 s copy and
		// decode: the slots, not the batch, run out.
		g.Transfer.Threads = 8
		g.Decode.Instances = 1
		nD = float64(dp)
		g.Decode.KVSlots = 32
		g.Decode.StepTime = 10 * time.Millisecond
		hold := 8192/g.Prefill.TokensPerSec + 1 + 257*0.01
		g.Rate = 1.22 * nD * 32 / hold
		g.Prefill.Instances = int(g.Rate/(0.6*g.Prefill.TokensPerSec/8192)/float64(dp)) + 1
	}
	return g
}

type cell struct {
	name      string
	sc        sim.Scenario
	iterStats bool
	noKV      map[string]bool
	flaky     float64
}

func scenario(name string, groups ...sim.Group) sim.Scenario {
	return sim.Scenario{
		Name: name, Model: "meta-llama/Llama-3.1-8B-Instruct",
		InputTokens: 8192, OutputTokens: 256, KVBytesPerRequest: sim.LlamaKVBytes, StopFraction: 0.3,
		Groups: groups,
	}
}

// cells builds the matrix: every flavour × every stage it can saturate ×
// {DP 1, DP 2, large engines}, with one perturbation (restart, flaky
// scrapes, bursty arrivals) rotating over them; then mixed deployments: a
// group without a KV source beside one with, and two groups limited by
// different stages.
func cells() []cell {
	var out []cell
	perturb := []string{"restart", "flaky", "bursty", ""}
	k := 0
	for _, f := range flavours {
		for _, st := range f.stages {
			for _, v := range []struct {
				name string
				dp   int
				big  bool
			}{{"dp1", 1, false}, {"dp2", 2, false}, {"tp", 1, true}} {
				g := group(f, f.engine, st, v.dp, v.big)
				c := cell{name: fmt.Sprintf("%s/%s/%s", f.name, st, v.name), iterStats: f.iterStats}
				c.sc = scenario(c.name, g)
				p := perturb[k%len(perturb)]
				k++
				switch p {
				case "restart":
					c.sc.Restarts = []sim.Restart{{Instance: g.Name + "-p0", At: 70 * time.Second, Down: 3 * time.Second}}
				case "flaky":
					c.flaky = 0.1
				case "bursty":
					c.sc.Groups[0].Burst = sim.BurstSpec{Period: 8 * time.Second, Duty: 0.5}
				}
				if p != "" {
					c.name += "+" + p
				}
				out = append(out, c)
			}
		}
	}
	byName := map[string]flavour{}
	for _, f := range flavours {
		byName[f.name] = f
	}
	mixed := []struct {
		a, b   string
		sa, sb string
		noKV   string
	}{
		{"vllm-flagcx", "trtllm", sim.StageNone, sim.StageNone, ""},
		{"vllm-flagcx", "sglang", simPrefill, simKV, ""},
		{"vllm-nixl", "sglang", simDecode, sim.StageNone, ""},
		{"sglang", "trtllm", simKV, sim.StageNone, ""},
		{"vllm-flagcx", "trtllm", simKV, simDecode, ""},
		{"vllm-nixl", "sglang", sim.StageNone, simPrefill, "vllm"},
		{"vllm-flagcx", "sglang", sim.StageNone, sim.StageNone, "sglang"},
		{"sglang", "trtllm-iterstats", sim.StageAdmission, simPrefill, ""},
	}
	for _, mx := range mixed {
		fa, fb := byName[mx.a], byName[mx.b]
		name := fmt.Sprintf("%s:%s+%s:%s", mx.a, mx.sa, mx.b, mx.sb)
		c := cell{name: name, iterStats: fa.iterStats || fb.iterStats,
			sc: scenario(name, group(fa, fa.engine, mx.sa, 1, false), group(fb, fb.engine, mx.sb, 1, false))}
		if mx.noKV != "" {
			c.noKV = map[string]bool{mx.noKV: true}
			c.name += " (no KV source in " + mx.noKV + ")"
		}
		out = append(out, c)
	}
	return out
}

// stageOf maps a verdict class onto the load model's stage names.
func stageOf(c diagnose.Class) string {
	switch c {
	case diagnose.Balanced:
		return sim.StageNone
	case diagnose.PrefillBound, diagnose.KVBound, diagnose.DecodeBound, diagnose.AdmissionBound:
		return string(c)
	}
	return string(c) // insufficient, mixed: never a group's truth
}

type cellResult struct {
	name      string
	group     string
	truth     string
	util      float64 // of the true bottleneck (or busiest stage)
	verdicts  map[string]int
	checks    int
	matches   int
	lowUtil   []string // verdicts naming a stage below 70% utilisation
	lastWrong string
}

func (r cellResult) modal() string {
	best, n := "", -1
	for v, k := range r.verdicts {
		if k > n || k == n && v < best {
			best, n = v, k
		}
	}
	return best
}

// TestVerdictMatrix runs every cell for 150 simulated seconds and checks the
// per-group verdict every 5 s after a 50 s warm-up against the load model's
// true bottleneck. A cell matches when at least 90% of its checkpoints do.
func TestVerdictMatrix(t *testing.T) {
	all := cells()
	full := len(all)
	if step := sampleStep(); step > 1 {
		var some []cell
		for i, c := range all {
			if i%step == 0 {
				some = append(some, c)
			}
		}
		all = some
	}
	results := make([][]cellResult, len(all))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for i, c := range all {
		load := c.sc.LoadModel()
		for _, g := range load.Groups {
			if g.Bottleneck == sim.StageNone && g.Utilisation >= 0.7 || g.Bottleneck != sim.StageNone && g.Utilisation < 1.1 {
				t.Fatalf("%s: group %s is too close to saturation to have a clear truth: %+v", c.name, g.Group, g.Stages)
			}
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			res := map[string]*cellResult{}
			r := run{sc: c.sc, seed: int64(i + 1), iterStats: c.iterStats, noKV: c.noKV, flaky: c.flaky,
				duration: 150 * time.Second, warmUp: 50 * time.Second, every: 5 * time.Second}
			r.check = func(cp checkpoint) {
				for _, gl := range cp.truth.Groups {
					cr := res[gl.Group]
					if cr == nil {
						cr = &cellResult{name: c.name, group: gl.Group, truth: gl.Bottleneck, util: gl.Utilisation, verdicts: map[string]int{}}
						res[gl.Group] = cr
					}
					cr.checks++
					gv, err := groupVerdict(cp.verdict, gl.Engine)
					got := "missing"
					if err == nil {
						got = stageOf(gv.Class)
					}
					cr.verdicts[got]++
					if got == gl.Bottleneck {
						cr.matches++
					} else {
						cr.lastWrong = fmt.Sprintf("at %v: %s %q %q", cp.at, got, gv.Evidence, gv.Notes)
					}
					// The simulator ships exactly B_request per transfer: the
					// bytes-per-transfer check must stay quiet.
					for _, n := range gv.Notes {
						if strings.Contains(n, "off B_request") {
							cr.lowUtil = append(cr.lowUtil, fmt.Sprintf("%v: false bytes-per-transfer note %q", cp.at, n))
						}
					}
					if got != sim.StageNone && got != gl.Bottleneck {
						if u := gl.Stage(got).Utilisation; u < 0.7 {
							cr.lowUtil = append(cr.lowUtil, fmt.Sprintf("%v: %s at %.0f%%", cp.at, got, 100*u))
						}
					}
				}
			}
			if err := r.do(); err != nil {
				t.Errorf("%s: %v", c.name, err)
				return
			}
			var out []cellResult
			for _, g := range c.sc.Groups {
				if cr := res[g.Name]; cr != nil {
					out = append(out, *cr)
				}
			}
			results[i] = out
		}()
	}
	wg.Wait()

	stages := []string{sim.StageNone, simPrefill, simKV, sim.StageAdmission, simDecode}
	confusion := map[string]map[string]int{}
	cols := map[string]bool{}
	cellsOK, cellsN, checks, checksOK := 0, 0, 0, 0
	var failures []string
	for _, rs := range results {
		ok := len(rs) > 0
		for _, r := range rs {
			m := r.modal()
			checks += r.checks
			checksOK += r.matches
			if confusion[r.truth] == nil {
				confusion[r.truth] = map[string]int{}
			}
			confusion[r.truth][m]++
			cols[m] = true
			if float64(r.matches) < 0.9*float64(r.checks) {
				ok = false
				failures = append(failures, fmt.Sprintf("%s [%s]: truth %s (%.0f%%), verdicts %v; last wrong %s", r.name, r.group, r.truth, 100*r.util, r.verdicts, r.lastWrong))
			}
			if len(r.lowUtil) > 0 {
				t.Errorf("%s [%s]: named a stage below 70%% utilisation, or a false note: %v", r.name, r.group, r.lowUtil)
			}
		}
		cellsN++
		if ok {
			cellsOK++
		}
	}
	var extra []string
	for c := range cols {
		if !contains(stages, c) {
			extra = append(extra, c)
		}
	}
	sort.Strings(extra)
	header := append(append([]string{}, stages...), extra...)
	var b strings.Builder
	fmt.Fprintf(&b, "\n| truth \\ verdict |")
	for _, c := range header {
		fmt.Fprintf(&b, " %s |", c)
	}
	fmt.Fprintf(&b, "\n|---|")
	for range header {
		fmt.Fprintf(&b, "---:|")
	}
	for _, r := range stages {
		fmt.Fprintf(&b, "\n| %s |", r)
		for _, c := range header {
			fmt.Fprintf(&b, " %d |", confusion[r][c])
		}
	}
	t.Logf("verdict matrix: %d of %d cells match (%.1f%%); %d of %d checkpoints (%.1f%%); group verdicts (modal verdict per group over its checkpoints):%s",
		cellsOK, cellsN, 100*float64(cellsOK)/float64(cellsN), checksOK, checks, 100*float64(checksOK)/float64(checks), b.String())
	for _, f := range failures {
		t.Log("mismatch: " + f)
	}
	if float64(cellsOK) < 0.95*float64(cellsN) {
		t.Errorf("%d of %d cells match; want ≥ 95%%", cellsOK, cellsN)
	}
	if full < 60 {
		t.Errorf("matrix has %d cells; want ≥ 60", full)
	}
}

// sampleStep is 1 (every cell) unless the run is short or under the race
// detector, which take every 4th or 24th cell.
func sampleStep() int {
	switch {
	case raceDetector:
		return 24
	case testing.Short():
		return 4
	}
	return 1
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
