package advice

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/sim/simtest"
	"github.com/ptdmon/ptdmon/internal/stage"
)

// stack is one engine with its KV connector, as the matrix runs it.
type stack struct {
	name, engine, connector string
}

var stacks = []stack{
	{"vllm+nixl", string(engine.VLLM), sim.ConnectorNIXL},
	{"sglang+mooncake", string(engine.SGLang), sim.ConnectorMooncake},
	{"trtllm", string(engine.TensorRTLLM), sim.ConnectorUCX},
}

// cell is one deployment of the matrix: a stack, the stage that limits
// first, and the load as a share of that stage's capacity.
type cell struct {
	stack stack
	limit stage.Stage
	load  float64
	seed  int64
	// growing: decode's step grows with its batch, from 12 ms plus 1.1 ms
	// a running request (29.6 ms at the batch limit of 16).
	growing bool
}

func (c cell) String() string {
	g := ""
	if c.growing {
		g = "/growing-steps"
	}
	return fmt.Sprintf("%s/%s/%.0f%%/seed%d%s", c.stack.name, c.limit, 100*c.load, c.seed, g)
}

// scenario is the cell's deployment: one prefill and one decode instance,
// the limiting stage's capacity below the others' (per engine: prefill 3
// req/s; decode 5, or 2.08 when it limits; KV 8, or 2 when it limits), and
// Poisson arrivals at load × the limiting capacity.
func (c cell) scenario() sim.Scenario {
	sc, _ := sim.LoadScenario("balanced")
	g := sc.Groups[0]
	g.Name, g.Engine, g.Connector = "g", c.stack.engine, c.stack.connector
	g.Prefill.Instances, g.Decode.Instances, g.Prefill.DP, g.Decode.DP = 1, 1, 1, 1
	switch c.limit {
	case stage.Decode:
		g.Decode.MaxBatch, g.Decode.StepTime = 16, 30*time.Millisecond
		if c.growing {
			g.Decode.StepTime, g.Decode.StepTimePerRequest = 12*time.Millisecond, 1100*time.Microsecond
		}
	case stage.KV:
		g.Transfer.BandwidthBytesPerSec = 2 * float64(1<<30)
		g.Transfer.Threads = 1
	}
	sc.Groups = []sim.Group{g}
	p, kv, d := g.CapacityPerEngine(sc)
	g.Rate = c.load * min(p, kv, d)
	sc.Groups[0] = g
	sc.Name = c.String()
	return sc
}

// runCell simulates the cell for dur, the decode instances' max_num_seqs
// given as the configuration would, TensorRT-LLM read from its iteration
// statistics.
func runCell(t testing.TB, c cell, dur time.Duration, checkpoints []int, f func(at int, caps []Capacity)) (sim.Scenario, []sim.StageState) {
	t.Helper()
	sc := c.scenario()
	l := NewLearner(Options{Window: 5 * time.Second})
	maxSeqs := strconv.Itoa(sc.Groups[0].Decode.MaxBatch)
	next := 0
	var m *sim.Model
	states := []sim.StageState{{}}
	_, err := simtest.RunWith(sc, c.seed, dur, simtest.Options{
		IterationStats: true,
		Model:          func(mm *sim.Model) { m = mm },
		Targets: func(ts []engine.Target) {
			for i := range ts {
				if ts[i].Role == engine.Decode {
					ts[i].Labels = map[string]string{ledger.LabelMaxNumSeqs: maxSeqs}
				}
			}
		},
		OnTick: func(led *ledger.Ledger) {
			p, _ := led.Latest()
			l.Observe(p)
			states = append(states, m.State())
			s := int(p.Time.Sub(simtest.Epoch) / time.Second)
			if next < len(checkpoints) && s == checkpoints[next] {
				next++
				f(s, l.Capacities())
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return sc, states
}

// checkpoints are the simulated seconds at which the matrix reads the
// advice: from a minute after decode's first request is done on (the
// estimates average over a minute).
var checkpoints = []int{70, 85, 100}

// trueUtilisation is the share of a stage's capacity the simulated
// engines used over the minute before at, from their own state: prefill's
// busy time, decode's batch occupancy (each step's batch over its limit),
// per engine. Decode's first eight seconds, before the first request is
// done and a windowed rate starts the estimates, are left out.
func trueUtilisation(states []sim.StageState, which stage.Stage, at int) float64 {
	from := at - 60
	if which == stage.Decode {
		from = max(from, 10)
	}
	a, b := states[from], states[at]
	dt := (b.At - a.At).Seconds()
	if which == stage.Decode {
		return (b.DecodeBusy - a.DecodeBusy).Seconds() / dt / float64(b.DecodeEngines)
	}
	return (b.PrefillBusy - a.PrefillBusy).Seconds() / dt / float64(b.PrefillEngines)
}

// Below saturation, at 30, 50 and 70% of the limiting stage's capacity,
// on vLLM + NIXL, SGLang + Mooncake and TensorRT-LLM with prefill or decode
// limiting first: from the first minute on, prefill's capacity (busy time)
// and decode's (batch) are within 15% of the truth, their utilisations
// within 0.08 of the share of the true capacity the requests used, and the
// stage named to limit first is the true one at 95% of the checkpoints.
func TestCapacityBelowSaturation(t *testing.T) {
	var cells []cell
	for _, st := range stacks {
		for _, lim := range []stage.Stage{stage.Prefill, stage.Decode} {
			for _, load := range []float64{0.3, 0.5, 0.7} {
				for seed := int64(1); seed <= seeds; seed++ {
					cells = append(cells, cell{st, lim, load, seed, false})
				}
			}
		}
	}
	// Under the race detector, one seed: the second runs without it.
	if seeds == 2 && len(cells) < 30 {
		t.Fatalf("%d cells", len(cells))
	}
	var named, checked int
	for _, c := range cells {
		got := map[int][]Capacity{}
		firsts := map[int]LimitsFirst{}
		sc, states := runCell(t, c, 100*time.Second, checkpoints, func(at int, caps []Capacity) {
			got[at] = caps
			firsts[at] = limitsFirst(caps)
		})
		p, _, d := sc.Groups[0].CapacityPerEngine(sc)
		for _, at := range checkpoints {
			caps := got[at]
			for i, truth := range map[int]float64{0: p, 2: d} {
				cp := caps[i]
				if !cp.PerInstance.OK() || math.Abs(cp.PerInstance.V-truth) > 0.15*truth {
					t.Errorf("%s at %ds: %s capacity %v (%s), truth %.3f: %s", c, at, cp.Stage, cp.PerInstance, cp.Basis, truth, cp.Evidence)
				}
				u := trueUtilisation(states, cp.Stage, at)
				if !cp.Utilisation.OK() || math.Abs(cp.Utilisation.V-u) > 0.08 {
					t.Errorf("%s at %ds: %s utilisation %v, truth %.3f", c, at, cp.Stage, cp.Utilisation, u)
				}
			}
			checked++
			if firsts[at].Stage == c.limit {
				named++
			} else {
				t.Logf("%s at %ds: %s named to limit first", c, at, firsts[at].Text)
			}
		}
	}
	if share := float64(named) / float64(checked); share < 0.95 {
		t.Errorf("limits first named right at %d of %d checkpoints (%.0f%%), want ≥ 95%%", named, checked, 100*share)
	}
	t.Logf("%d cells, limits first right at %d of %d checkpoints", len(cells), named, checked)
}

// Where the link limits, no engine says how busy it is: one transfer's
// speed (bytes over transfer-seconds) bounds its capacity from below, and
// the advice says the link may limit first. The bound holds whatever the
// connector's concurrency: on one thread it is the link, on four a quarter.
func TestLinkCapacityIsABound(t *testing.T) {
	for _, st := range stacks {
		for _, load := range []float64{0.3, 0.5, 0.7} {
			c := cell{st, stage.KV, load, 1, false}
			got := map[int][]Capacity{}
			sc, _ := runCell(t, c, 100*time.Second, checkpoints, func(at int, caps []Capacity) { got[at] = caps })
			_, truth, _ := sc.Groups[0].CapacityPerEngine(sc)
			for _, at := range checkpoints {
				kv := got[at][1]
				if kv.Basis == BasisSaturated {
					continue
				}
				if st.engine == string(engine.TensorRTLLM) {
					// Its iteration statistics carry each request's copy
					// time, not a histogram of them: no bound, and why.
					if kv.Basis != "" || !strings.Contains(kv.Utilisation.Why, "transfer time histogram") {
						t.Errorf("%s at %ds: kv %+v", c, at, kv)
					}
					continue
				}
				if kv.PerInstance.OK() || kv.Bound != AtLeast || kv.Basis != BasisTransferTime || !kv.AtLeast.OK() || kv.AtLeast.V > 1.05*truth {
					t.Errorf("%s at %ds: kv %+v, truth %.3f", c, at, kv, truth)
				}
				// Transfers on one thread do not overlap: the bound is tight.
				if kv.AtLeast.V < 0.85*truth {
					t.Errorf("%s at %ds: kv at least %.3f, truth %.3f on one thread", c, at, kv.AtLeast.V, truth)
				}
				if lf := limitsFirst(got[at]); lf.Stage != stage.KV && !strings.Contains(lf.Unsure, "kv may limit first") {
					t.Errorf("%s at %ds: limits first %+v, want kv or kv unsure", c, at, lf)
				}
			}
		}
	}
}

// Where decode's step grows with its batch (a step reads each running
// request's KV), a small batch's requests complete faster than a full
// batch's: carried to the limit at the small batch's speed, decode's
// capacity would read up to twice the truth at 30% load. The fit of the
// steps against the batches carries it at the speed of a full batch: within
// 15% of the truth, its utilisation (rate over capacity) within 0.08, and
// decode named to limit first.
func TestDecodeCapacityWithGrowingSteps(t *testing.T) {
	for _, st := range stacks {
		for _, load := range []float64{0.3, 0.5, 0.7} {
			c := cell{st, stage.Decode, load, 1, true}
			got := map[int][]Capacity{}
			sc, states := runCell(t, c, 100*time.Second, checkpoints, func(at int, caps []Capacity) { got[at] = caps })
			_, _, truth := sc.Groups[0].CapacityPerEngine(sc)
			for _, at := range checkpoints {
				d := got[at][2]
				if !d.PerInstance.OK() || math.Abs(d.PerInstance.V-truth) > 0.15*truth {
					t.Errorf("%s at %ds: decode capacity %v (%s), truth %.3f: %s", c, at, d.PerInstance, d.Basis, truth, d.Evidence)
				}
				a, b := states[at-60], states[at]
				rate := float64(b.DecodeTokens-a.DecodeTokens) / float64(sc.OutputTokens) / (b.At - a.At).Seconds()
				u := rate / (truth * float64(b.DecodeEngines))
				if !d.Utilisation.OK() || math.Abs(d.Utilisation.V-u) > 0.08 {
					t.Errorf("%s at %ds: decode utilisation %v, truth %.3f: %s", c, at, d.Utilisation, u, d.Evidence)
				}
				if lf := limitsFirst(got[at]); lf.Stage != stage.Decode {
					t.Errorf("%s at %ds: %s", c, at, lf.Text)
				}
			}
		}
	}
}

// The P:D ratio of the capacities below saturation is the one the same
// deployment shows once its limiting stage saturates.
func TestCapacityRatioAsSaturated(t *testing.T) {
	// Under the race detector, two of the three stacks.
	for _, st := range stacks[:len(stacks)-2+seeds] {
		for _, lim := range []stage.Stage{stage.Prefill, stage.Decode} {
			ratio := func(load float64, dur time.Duration) (ledger.Num, string) {
				var r ledger.Num
				var basis string
				runCell(t, cell{st, lim, load, 3, false}, dur, []int{int(dur / time.Second)}, func(_ int, caps []Capacity) {
					r, _ = capacityRatio(caps)
					basis = caps[map[stage.Stage]int{stage.Prefill: 0, stage.Decode: 2}[lim]].Basis
				})
				return r, basis
			}
			below, _ := ratio(0.5, 90*time.Second)
			sat, basis := ratio(1.3, 150*time.Second)
			if basis != BasisSaturated {
				t.Errorf("%s/%s at 130%%: %s not learned saturated (%s)", st.name, lim, lim, basis)
			}
			if !below.OK() || !sat.OK() || math.Abs(below.V-sat.V) > 0.15*sat.V {
				t.Errorf("%s/%s: P:D %v below saturation, %v saturated", st.name, lim, below, sat)
			}
		}
	}
}
