package sim

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	ptd "github.com/ptdmon/ptdmon/internal/engine"
)

type window struct {
	st0, st1 StageState
	tr0, tr1 Truth
}

func (w window) secs() float64 { return (w.st1.At - w.st0.At).Seconds() }
func (w window) util() (p, x, d float64) {
	s := w.secs()
	p = (w.st1.PrefillBusy - w.st0.PrefillBusy).Seconds() / s / float64(w.st1.PrefillEngines)
	x = (w.st1.TransferBusy - w.st0.TransferBusy).Seconds() / s / float64(w.st1.PrefillEngines)
	d = (w.st1.DecodeBusy - w.st0.DecodeBusy).Seconds() / s / float64(w.st1.DecodeEngines)
	return
}
func (w window) rates() (p, kv, d float64) {
	s := w.secs()
	a, b := w.tr0.Totals, w.tr1.Totals
	p = float64(b.PrefillCompleted-a.PrefillCompleted) / s
	kv = float64(b.KVBytes-a.KVBytes) / s / float64(w.tr1.BytesPerRequest)
	d = float64(b.DecodeCompleted-a.DecodeCompleted) / s
	return
}

func runWindow(t *testing.T, sc Scenario, seed int64, from, to time.Duration) window {
	t.Helper()
	m, err := NewModel(sc, seed, testEpoch)
	if err != nil {
		t.Fatal(err)
	}
	var w window
	m.AdvanceTo(from)
	w.st0, w.tr0 = m.State(), m.TruthAt(from)
	m.AdvanceTo(to)
	w.st1, w.tr1 = m.State(), m.TruthAt(to)
	return w
}

// capacity sums per-engine stage capacities over the cluster.
func capacity(sc Scenario) (p, kv, d float64) {
	for _, g := range sc.Groups {
		cp, ck, cd := g.CapacityPerEngine(sc)
		pe := float64(g.Prefill.Instances * max(g.Prefill.DP, 1))
		de := float64(g.Decode.Instances * max(g.Decode.DP, 1))
		p += cp * pe
		kv += ck * pe
		d += cd * de
	}
	return
}

func TestScenarioBottlenecks(t *testing.T) {
	for _, seed := range []int64{1, 2, 3} {
		for _, name := range ScenarioNames() {
			t.Run(fmt.Sprintf("%s/seed%d", name, seed), func(t *testing.T) {
				sc, err := LoadScenario(name)
				if err != nil {
					t.Fatal(err)
				}
				lambda := sc.TotalRate()
				capP, capKV, capD := capacity(sc)
				w := runWindow(t, sc, seed, 20*time.Second, 80*time.Second)
				uP, uX, uD := w.util()
				rP, rKV, rD := w.rates()
				a, b := w.st0, w.st1
				t.Logf("λ=%.2f cap P=%.2f KV=%.2f D=%.2f | util P=%.2f X=%.2f D=%.2f | rate P=%.2f KV=%.2f D=%.2f | end %+v",
					lambda, capP, capKV, capD, uP, uX, uD, rP, rKV, rD, b)
				grow := func(what string, d int) int { t.Logf("%s grew by %d", what, d); return d }
				switch sc.Bottleneck {
				case "none":
					if uP > 0.85 || uX > 0.85 || uD > 0.85 {
						t.Errorf("a stage is saturated in a balanced run: util P=%.2f X=%.2f D=%.2f", uP, uX, uD)
					}
					if b.PrefillWaiting > 15 || b.Inflight > 30 || b.Prealloc > 5 || b.DecodeWaiting > 10 || b.Bootstrap > 5 {
						t.Errorf("queues not small: %+v", b)
					}
					for _, r := range []float64{rP, rKV, rD} {
						if r < 0.8*lambda || r > 1.2*lambda {
							t.Errorf("stage rate %.2f not ≈ λ=%.2f", r, lambda)
						}
					}
				case "prefill":
					if uP < 0.97 {
						t.Errorf("prefill utilisation %.2f, want ~1", uP)
					}
					if grow("prefill waiting", b.PrefillWaiting-a.PrefillWaiting) < 30 {
						t.Error("prefill waiting does not grow")
					}
					if uX > 0.6 || uD > 0.8 {
						t.Errorf("downstream stages should have slack: X=%.2f D=%.2f", uX, uD)
					}
					if b.Inflight > 20 || b.DecodeWaiting > 5 {
						t.Errorf("downstream queues grew: %+v", b)
					}
					if rP > capP*1.03 || rP > 0.95*lambda {
						t.Errorf("prefill rate %.2f should be capped at %.2f < λ %.2f", rP, capP, lambda)
					}
				case "kv":
					if uX < 0.97 {
						t.Errorf("transfer utilisation %.2f, want ~1", uX)
					}
					if grow("inflight", b.Inflight-a.Inflight) < 30 {
						t.Error("prefill inflight queue does not grow")
					}
					if grow("decode receiving", b.Receiving-a.Receiving) < 30 {
						t.Error("decode transfer queue does not grow")
					}
					if uP > 0.95 || uD > 0.7 {
						t.Errorf("prefill/decode should have slack: P=%.2f D=%.2f", uP, uD)
					}
					if rKV > capKV*1.03 || rKV > 0.9*lambda {
						t.Errorf("KV rate %.2f should be capped at %.2f < λ %.2f", rKV, capKV, lambda)
					}
				case "decode":
					if uD < 0.97 {
						t.Errorf("decode occupancy %.2f, want ~1", uD)
					}
					if grow("decode waiting+prealloc", b.DecodeWaiting+b.Prealloc-a.DecodeWaiting-a.Prealloc) < 30 {
						t.Error("decode waiting/prealloc does not grow")
					}
					if uX > 0.6 || uP > 0.95 {
						t.Errorf("upstream should have slack: P=%.2f X=%.2f", uP, uX)
					}
					if rD > capD*1.03 || rD > 0.9*rP {
						t.Errorf("decode rate %.2f should be capped at %.2f below prefill rate %.2f", rD, capD, rP)
					}
				default:
					t.Fatalf("scenario %s has no bottleneck label", name)
				}
				if len(sc.Restarts) == 0 && b.Dropped > 0 {
					t.Errorf("%d arrivals dropped", b.Dropped)
				}
			})
		}
	}
}

func TestDeterministicAndChunkingInvariant(t *testing.T) {
	sc := mixedScenario()
	a, _ := NewModel(sc, 7, testEpoch)
	b, _ := NewModel(sc, 7, testEpoch)
	c, _ := NewModel(sc, 8, testEpoch)
	a.AdvanceTo(45 * time.Second)
	for d := time.Duration(0); d <= 45*time.Second; d += 7 * time.Millisecond {
		b.AdvanceTo(d)
	}
	b.AdvanceTo(45 * time.Second)
	c.AdvanceTo(45 * time.Second)
	if a.TruthAt(a.Now()).Totals != b.TruthAt(b.Now()).Totals {
		t.Fatalf("chunked advance differs: %+v vs %+v", a.TruthAt(a.Now()).Totals, b.TruthAt(b.Now()).Totals)
	}
	if a.State() != b.State() {
		t.Fatalf("state differs")
	}
	for _, in := range a.Instances() {
		x, _, _ := a.Exposition(in.Name, nil)
		y, _, _ := b.Exposition(in.Name, nil)
		if !bytes.Equal(x, y) {
			t.Fatalf("%s exposition differs between identical runs", in.Name)
		}
	}
	if a.TruthAt(a.Now()).Totals == c.TruthAt(c.Now()).Totals {
		t.Fatal("a different seed gave identical totals")
	}
}

func TestTruthHistoryRetained(t *testing.T) {
	m, _ := NewModel(mixedScenario(), 3, testEpoch)
	var snaps []Truth
	for s := 1; s <= 30; s++ {
		m.AdvanceTo(time.Duration(s) * time.Second)
		snaps = append(snaps, m.TruthAt(m.Now()))
	}
	m.AdvanceTo(60 * time.Second)
	for i, want := range snaps {
		got := m.TruthAt(time.Duration(i+1) * time.Second)
		if got.Totals != want.Totals {
			t.Fatalf("truth at %ds changed later: %+v vs %+v", i+1, got.Totals, want.Totals)
		}
	}
	last := snaps[len(snaps)-1].Totals
	if last.PrefillCompleted == 0 || last.DecodeCompleted == 0 || last.KVBytes == 0 {
		t.Fatalf("no traffic: %+v", last)
	}
	if last.KVBytes != last.KVTransfers*m.Scenario().KVBytesPerRequest {
		t.Fatalf("KV bytes %d != transfers %d × B", last.KVBytes, last.KVTransfers)
	}
	// Future instants are answered as of now.
	if got := m.TruthAt(time.Hour); got.SimSeconds != 60 {
		t.Fatalf("future truth answered at %v", got.SimSeconds)
	}
}

// Every counter the collector uses equals the truth at the instant it is
// rendered, for every engine format and connector, at many instants.
func TestExpositionMatchesTruth(t *testing.T) {
	m, err := NewModel(mixedScenario(), 11, testEpoch)
	if err != nil {
		t.Fatal(err)
	}
	prev := map[string]Counts{}
	for _, at := range []time.Duration{0, 1500 * time.Millisecond, 10 * time.Second, 33*time.Second + 123, 90 * time.Second} {
		m.AdvanceTo(at)
		tr := m.TruthAt(at)
		for _, in := range m.Instances() {
			body, _, err := m.Exposition(in.Name, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := exportedCounts(t, ptd.Engine(in.Engine), in.Role, parseExpo(t, body))
			want := roleCounts(in.Role, tr.Instance(in.Name).Exported)
			if got != want {
				t.Errorf("t=%v %s: exposition %+v, truth %+v", at, in.Name, got, want)
			}
			p := prev[in.Name]
			if got.KVBytes < p.KVBytes || got.PrefillCompleted < p.PrefillCompleted || got.DecodeCompleted < p.DecodeCompleted {
				t.Errorf("%s counters decreased without a restart", in.Name)
			}
			prev[in.Name] = got
		}
	}
	end := m.TruthAt(m.Now())
	for _, it := range end.Instances {
		if it.Role == RoleDecode && it.DecodeCompleted == 0 {
			t.Errorf("%s completed nothing", it.Name)
		}
		// KV is counted on the decode side only for NIXL.
		if (it.Connector == ConnectorNIXL) != (it.Role == RoleDecode) && it.KVBytes != 0 {
			t.Errorf("%s (%s %s) counts KV bytes on the wrong side", it.Name, it.Connector, it.Role)
		}
	}
}

func TestModelRestart(t *testing.T) {
	sc, _ := LoadScenario("restart")
	m, err := NewModel(sc, 5, testEpoch)
	if err != nil {
		t.Fatal(err)
	}
	const name = "vllm-p0"
	m.AdvanceTo(19 * time.Second)
	before := m.TruthAt(m.Now()).Instance(name)
	body, _, _ := m.Exposition(name, nil)
	pre := exportedCounts(t, ptd.VLLM, RolePrefill, parseExpo(t, body))
	if pre.PrefillCompleted == 0 || pre.KVBytes == 0 || pre.PrefillCompleted != before.PrefillCompleted {
		t.Fatalf("before restart: exposition %+v truth %+v", pre, before.Counts)
	}

	m.AdvanceTo(21 * time.Second)
	if _, _, err := m.Exposition(name, nil); !errors.Is(err, errDown) {
		t.Fatalf("exposition while down: err=%v", err)
	}
	down := m.TruthAt(m.Now()).Instance(name)
	if down.Up || down.Exported != (Counts{}) || down.PrefillCompleted < before.PrefillCompleted {
		t.Fatalf("truth while down: %+v", down)
	}

	m.AdvanceTo(23*time.Second + time.Millisecond)
	body, _, err = m.Exposition(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	fams := parseExpo(t, body)
	post := exportedCounts(t, ptd.VLLM, RolePrefill, fams)
	if post.PrefillCompleted != 0 || post.KVBytes != 0 {
		t.Fatalf("counters right after restart = %+v, want 0", post)
	}
	created := fams["vllm:request_success_created"].GetMetric()[0].GetGauge().GetValue()
	if want := float64(testEpoch.Add(23*time.Second).UnixNano()) / 1e9; created < want-1e-3 {
		t.Fatalf("_created %.3f not the new process start %.3f", created, want)
	}

	m.AdvanceTo(35 * time.Second)
	tr := m.TruthAt(m.Now()).Instance(name)
	body, _, _ = m.Exposition(name, nil)
	post = exportedCounts(t, ptd.VLLM, RolePrefill, parseExpo(t, body))
	if tr.Restarts != 1 || !tr.Up {
		t.Fatalf("truth restarts=%d up=%v", tr.Restarts, tr.Up)
	}
	if post.PrefillCompleted == 0 || post.PrefillCompleted >= tr.PrefillCompleted {
		t.Fatalf("after restart exposition %d should be >0 and below cumulative truth %d", post.PrefillCompleted, tr.PrefillCompleted)
	}
	if roleCounts(RolePrefill, tr.Exported) != post {
		t.Fatalf("exported truth %+v != exposition %+v", tr.Exported, post)
	}
	if tr.PrefillCompleted < before.PrefillCompleted || tr.KVBytes < before.KVBytes {
		t.Fatal("cumulative truth decreased across the restart")
	}
	// The rest of the cluster kept working and the decode side saw failures
	// for copies the dead prefill never finished.
	var failed float64
	for _, in := range m.Instances() {
		if in.Role == RoleDecode && in.Engine == string(ptd.VLLM) {
			b, _, _ := m.Exposition(in.Name, nil)
			v, _ := sumCounter(parseExpo(t, b), "vllm:flagcx_num_failed_recvs_total", "")
			failed += v
		}
	}
	t.Logf("decode-side failed recvs after the restart: %v", failed)
}

// KV slots bound the hand-off queues, and a full stage pushes back on the
// one before it: in kv-bound, once the prefill engines hold all the KV they
// can, prefill stops admitting and its waiting queue takes the growth.
func TestQueuesBoundedWithBackpressure(t *testing.T) {
	sc, _ := LoadScenario("kv-bound")
	// The vLLM group alone: SGLang reserves decode KV before prefill, so
	// there the decode slots fill first.
	sc.Groups = sc.Groups[:1]
	m, _ := NewModel(sc, 1, testEpoch)
	var pSlots, dSlots int
	for _, g := range sc.Groups {
		pSlots += g.Prefill.KVSlots * g.Prefill.Instances
		dSlots += g.Decode.KVSlots * g.Decode.Instances
	}
	var waitAtFull = -1
	for s := 1; s <= 300; s++ {
		m.AdvanceTo(time.Duration(s) * time.Second)
		st := m.State()
		if st.Inflight+st.PrefillRunning > pSlots {
			t.Fatalf("t=%ds: prefill holds %d KV > %d slots", s, st.Inflight+st.PrefillRunning, pSlots)
		}
		if st.Receiving+st.DecodeWaiting+st.DecodeRunning > dSlots {
			t.Fatalf("t=%ds: decode holds %d KV > %d slots", s, st.Receiving+st.DecodeWaiting+st.DecodeRunning, dSlots)
		}
		if waitAtFull < 0 && st.Inflight+st.PrefillRunning >= pSlots-3 {
			waitAtFull = st.PrefillWaiting + st.Bootstrap
		}
	}
	end := m.State()
	if waitAtFull < 0 {
		t.Fatal("prefill KV never filled up in a kv-bound run")
	}
	if grew := end.PrefillWaiting + end.Bootstrap - waitAtFull; grew < 50 {
		t.Fatalf("no backpressure: prefill waiting grew by %d after KV filled", grew)
	}
}
