package sim

import (
	"math"
	"testing"
	"time"

	ptd "github.com/ptdmon/ptdmon/internal/engine"
)

// busyWindow is the simulated minute the busy-time tests measure, after a
// warm-up that fills the queues.
const (
	busyFrom = 30 * time.Second
	busyTo   = 90 * time.Second
)

// busyTolerance: the busy fraction derived from the engines' families is the
// truth's within 2 % of the time.
const busyTolerance = 0.02

// readInstance reads an instance's exposition through its engine's adapter,
// as a scrape would.
func readInstance(t *testing.T, m *Model, rd *ptd.Reader, name string) *ptd.Observation {
	t.Helper()
	body, _, err := m.Exposition(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	o, err := rd.Read(body, textContentType)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return o
}

func role(r string) ptd.Role {
	if r == RolePrefill {
		return ptd.Prefill
	}
	return ptd.Decode
}

// trueBusy is the truth's busy fraction of an instance's engines over
// [from, to].
func trueBusy(m *Model, name string, from, to time.Duration) (float64, int) {
	a, b := m.TruthAt(from).Instance(name), m.TruthAt(to).Instance(name)
	return (b.BusySeconds - a.BusySeconds) / ((to - from).Seconds() * float64(b.Engines)), b.Engines
}

// busyLoads are the loads the busy-time tests run at: the scenario's, where
// prefill engines are busy part of the time and decode engines step all
// the time, and a twentieth of it, where decode engines idle between
// requests. An instance is checked where its true busy fraction is neither
// near 0 nor near 1, and each role must be checked at least once.
var busyLoads = []float64{1, 0.05}

// checkBusy runs sc at each load over the busy window and compares, for
// every instance of engine eng, the busy fraction derive returns from its
// observations at the window's ends (Δt, the instance) with the truth's.
func checkBusy(t *testing.T, sc Scenario, eng ptd.Engine, derive func(in *instance, o0, o1 *ptd.Observation) float64) {
	t.Helper()
	checked := map[string]int{}
	for _, load := range busyLoads {
		m, err := NewModel(scaleRates(sc, load), 3, testEpoch)
		if err != nil {
			t.Fatal(err)
		}
		readers := map[string]*ptd.Reader{}
		first := map[string]*ptd.Observation{}
		m.AdvanceTo(busyFrom)
		for _, in := range m.Instances() {
			if in.Engine != string(eng) {
				continue
			}
			readers[in.Name] = ptd.NewReader(eng, role(in.Role), ptd.KVAuto)
			o := *readInstance(t, m, readers[in.Name], in.Name) // the reader reuses its observation
			o.Counters = append([]ptd.CounterValue(nil), o.Counters...)
			first[in.Name] = &o
		}
		m.AdvanceTo(busyTo)
		for _, in := range m.Instances() {
			if in.Engine != string(eng) {
				continue
			}
			o := readInstance(t, m, readers[in.Name], in.Name)
			want, _ := trueBusy(m, in.Name, busyFrom, busyTo)
			got := derive(m.byName[in.Name], first[in.Name], o)
			t.Logf("load ×%g %s: busy %.4f, truth %.4f", load, in.Name, got, want)
			if want < 0.1 || want > 0.98 {
				continue
			}
			if math.Abs(got-want) > busyTolerance*want {
				t.Errorf("load ×%g %s: busy %.4f, truth %.4f", load, in.Name, got, want)
			}
			checked[in.Role]++
		}
	}
	if checked[RolePrefill] == 0 || checked[RoleDecode] == 0 {
		t.Fatalf("instances checked by role: %v", checked)
	}
}

// busySpan is the busy window's engine-seconds of instance in.
func busySpan(in *instance) float64 { return (busyTo - busyFrom).Seconds() * float64(len(in.engines)) }

// SGLang: 1 − Δscheduler_idle_seconds ÷ (Δt × schedulers) is the truth's
// busy fraction; on decode with two DP ranks, the ranks' counters add up.
func TestSGLangBusyFromIdleCounter(t *testing.T) {
	checkBusy(t, mixedScenario(), ptd.SGLang, func(in *instance, o0, o1 *ptd.Observation) float64 {
		i0, ok0 := o0.CounterSum(ptd.SchedulerIdle)
		i1, ok1 := o1.CounterSum(ptd.SchedulerIdle)
		if !ok0 || !ok1 {
			t.Fatalf("%s: no scheduler idle seconds", in.name)
		}
		return 1 - (i1-i0)/busySpan(in)
	})
}

// SGLang's forward occupancy is the busy share of the last second, a
// percentage read as a fraction; idle (no work in the last second) it is
// NaN, read as no value.
func TestSGLangForwardOccupancy(t *testing.T) {
	m, _ := NewModel(mixedScenario(), 3, testEpoch)
	rd := ptd.NewReader(ptd.SGLang, ptd.Prefill, ptd.KVAuto)
	if _, ok := readInstance(t, m, rd, "sglang-p0").Gauge(ptd.ForwardOccupancy); ok {
		t.Fatal("occupancy of an engine that ran nothing")
	}
	for s := 20; s < 30; s++ {
		at := time.Duration(s) * time.Second
		m.AdvanceTo(at)
		got, ok := readInstance(t, m, rd, "sglang-p0").Gauge(ptd.ForwardOccupancy)
		want, _ := trueBusy(m, "sglang-p0", at-time.Second, at)
		if want == 0 {
			if ok {
				t.Errorf("%v: occupancy %v after an idle second", at, got)
			}
			continue
		}
		if !ok || math.Abs(got-want) > 1e-9 {
			t.Errorf("%v: occupancy %v (present %v), truth %v", at, got, ok, want)
		}
	}
}

// vLLM exports no busy time: iteration_tokens_total counts the steps and
// their tokens. At the model's speeds (the prompt's tokens at
// tokens_per_sec per prefill batch, one step_time per decode step) they
// give the truth's busy fraction: Δsum ÷ tokens_per_sec on prefill, Δcount ×
// step_time on decode. cache_config_info gives the KV cache's blocks.
func TestVLLMBusyFromIterationTokens(t *testing.T) {
	sc := mixedScenario()
	checkBusy(t, sc, ptd.VLLM, func(in *instance, o0, o1 *ptd.Observation) float64 {
		h0 := o0.Histograms[ptd.IterationTokens.HistogramIndex()]
		h1 := o1.Histograms[ptd.IterationTokens.HistogramIndex()]
		if !h0.Present || !h1.Present {
			t.Fatalf("%s: no iteration tokens", in.name)
		}
		g := in.grp.spec
		blocks := g.Decode.KVSlots * ((sc.InputTokens + sc.OutputTokens + 15) / 16)
		busy := (h1.Count - h0.Count) * g.Decode.StepTime.Seconds()
		if in.role == RolePrefill {
			blocks = g.Prefill.KVSlots * ((sc.InputTokens + 15) / 16)
			busy = (h1.Sum - h0.Sum) / g.Prefill.TokensPerSec
		}
		if v, ok := o1.Gauge(ptd.KVBlocks); !ok || v != float64(blocks*len(in.engines)) {
			t.Errorf("%s: KV blocks %v (present %v), want %d", in.name, v, ok, blocks*len(in.engines))
		}
		if v, ok := o1.Gauge(ptd.KVBlockSize); !ok || v != 16 {
			t.Errorf("%s: block size %v (present %v), want 16", in.name, v, ok)
		}
		return busy / busySpan(in)
	})
}

// TensorRT-LLM exports no busy time either, and its iteration latency is a
// gauge of the newest iteration. A worker is busy while its iteration has
// requests (a ctx worker computing a context batch, a gen worker stepping):
// the share of 10 ms samples of requests_context or requests_generation > 0
// is the truth's busy fraction, for a worker of one rank (the ranks'
// requests add up, so with attention DP the samples tell whether any rank
// works). The gen worker's iteration latency is the step time once it ran
// one.
func TestTRTLLMBusyFromIterationGauges(t *testing.T) {
	sc, _ := LoadScenario("trtllm")
	trt := sc.Groups[1]
	trt.Prefill.DP, trt.Rate = 1, 1.5
	sc.Groups = []Group{trt}
	step := trt.Decode.StepTime.Seconds()
	checked := map[string]int{}
	for _, load := range []float64{1, 0.15} { // 1.5 and 0.225 req/s
		for _, c := range []struct {
			name string
			role ptd.Role
			m    ptd.Metric
		}{{"trt-p0", ptd.Prefill, ptd.ContextRequests}, {"trt-d0", ptd.Decode, ptd.GenerationRequests}} {
			m, err := NewModel(scaleRates(sc, load), 3, testEpoch)
			if err != nil {
				t.Fatal(err)
			}
			rd := ptd.NewReader(ptd.TensorRTLLM, c.role, ptd.KVAuto)
			const every = 10 * time.Millisecond
			var busy, n int
			for at := busyFrom + every; at <= busyTo; at += every {
				m.AdvanceTo(at)
				o := readInstance(t, m, rd, c.name)
				v, ok := o.Gauge(c.m)
				if !ok {
					t.Fatalf("%s: no %s", c.name, c.m)
				}
				if v > 0 {
					busy++
				}
				n++
				// Absent until the first iteration, then the newest one's.
				if lat, ok := o.Gauge(ptd.IterationLatency); c.role == ptd.Decode && ok && math.Abs(lat-step) > 1e-12 {
					t.Fatalf("%s at %v: iteration latency %v, want the step %v", c.name, at, lat, step)
				}
				total, _ := o.Gauge(ptd.KVBlocks)
				free, _ := o.Gauge(ptd.KVBlocksFree)
				used, _ := o.Gauge(ptd.KVBlocksUsed)
				if total <= 0 || free+used != total {
					t.Fatalf("%s: KV blocks %v, free %v, used %v", c.name, total, free, used)
				}
			}
			got := float64(busy) / float64(n)
			want, _ := trueBusy(m, c.name, busyFrom, busyTo)
			t.Logf("load ×%g %s: busy %.4f, truth %.4f", load, c.name, got, want)
			if want < 0.1 || want > 0.98 {
				continue
			}
			if math.Abs(got-want) > busyTolerance*want {
				t.Errorf("load ×%g %s: busy %.4f from the iteration gauges, truth %.4f", load, c.name, got, want)
			}
			checked[string(c.role)]++
		}
	}
	if checked[RolePrefill] == 0 || checked[RoleDecode] == 0 {
		t.Fatalf("workers checked by role: %v", checked)
	}
}

// The truth carries every group's stages' capacity per engine, the load
// model's, and each instance's busy seconds: the batches and steps it
// completed, the work under way included.
func TestTruthBusyAndCapacity(t *testing.T) {
	sc := mixedScenario()
	m, _ := NewModel(sc, 3, testEpoch)
	m.AdvanceTo(busyTo)
	tr := m.TruthAt(busyTo)
	if len(tr.Capacity) != 3*len(sc.Groups) {
		t.Fatalf("%d capacities for %d groups", len(tr.Capacity), len(sc.Groups))
	}
	for i, g := range sc.Groups {
		p, kv, d := g.CapacityPerEngine(sc)
		for j, want := range []CapacityTruth{
			{g.Name, "prefill", p, g.Prefill.Instances * max(g.Prefill.DP, 1)},
			{g.Name, "kv", kv, g.Prefill.Instances * max(g.Prefill.DP, 1)},
			{g.Name, "decode", d, g.Decode.Instances * max(g.Decode.DP, 1)},
		} {
			if got := tr.Capacity[3*i+j]; got != want {
				t.Errorf("capacity %+v, want %+v", got, want)
			}
		}
	}
	for _, in := range m.instances {
		var done, under int64
		for _, e := range in.engines {
			done += e.busyNs // completed batches and steps
			if e.work.working {
				under += m.now - e.work.open
			}
		}
		got := tr.Instance(in.name)
		if want := float64(done+under) / 1e9; math.Abs(got.BusySeconds-want) > 1e-6 || got.Engines != len(in.engines) {
			t.Errorf("%s: busy %v s over %d engines, want %v s over %d", in.name, got.BusySeconds, got.Engines, want, len(in.engines))
		}
	}
}

// A restarted process counts its idle and busy seconds from its start, as
// its other counters do; the truth's busy seconds run on across restarts,
// and the process that died worked until it died.
func TestBusyAcrossRestart(t *testing.T) {
	sc, _ := LoadScenario("restart")
	m, _ := NewModel(sc, 1, testEpoch)
	rd := ptd.NewReader(ptd.SGLang, ptd.Decode, ptd.KVAuto)
	m.AdvanceTo(39 * time.Second)
	before, _ := readInstance(t, m, rd, "sglang-d0").CounterSum(ptd.SchedulerIdle)
	busyBefore := m.TruthAt(39 * time.Second).Instance("sglang-d0").BusySeconds
	m.AdvanceTo(50 * time.Second)
	after, ok := readInstance(t, m, rd, "sglang-d0").CounterSum(ptd.SchedulerIdle)
	up := 42 * time.Second
	tr := m.TruthAt(50 * time.Second).Instance("sglang-d0")
	busySinceUp := tr.BusySeconds - m.TruthAt(up).Instance("sglang-d0").BusySeconds
	if !ok || after > (50*time.Second-up).Seconds() || math.Abs(after-((50*time.Second-up).Seconds()-busySinceUp)) > 1e-9 {
		t.Fatalf("idle %v before the restart, %v (present %v) 8 s after it, want %v",
			before, after, ok, (50*time.Second-up).Seconds()-busySinceUp)
	}
	if tr.BusySeconds < busyBefore || tr.Restarts != 1 {
		t.Fatalf("truth's busy seconds %v after %v, restarts %d", tr.BusySeconds, busyBefore, tr.Restarts)
	}
}
