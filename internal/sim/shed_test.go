package sim

import (
	"testing"
	"time"

	ptd "github.com/ptdmon/ptdmon/internal/engine"
)

// A group that caps its queue sheds what its prefill cannot take, and the
// counter that counts it, read by the adapter, holds exactly the truth's
// shed requests: the prefill engines' own (vLLM's admission rejections,
// SGLang's queue rejections) without a router, the router's with one.
// vLLM's waiting by reason adds up to its waiting gauge.
func TestShedCountsTheTruth(t *testing.T) {
	f := func(name string, g Group, counter string) {
		t.Run(name, func(t *testing.T) {
			sc := baseScenario()
			g.Rate, g.MaxQueued = 12, 6 // 2 × 3 req/s of prefill capacity
			sc.Groups = []Group{g}
			m, err := NewModel(sc, 9, time.Unix(0, 0))
			if err != nil {
				t.Fatal(err)
			}
			at := 60 * time.Second
			m.AdvanceTo(at)
			var shed, waiting, byReason float64
			for _, in := range m.Instances() {
				body, fm, err := m.Exposition(in.Name, nil)
				if err != nil {
					t.Fatal(err)
				}
				o, err := ptd.NewReader(ptd.Engine(in.Engine), ptd.Role(in.Role), ptd.KVAuto).Read(body, fm.ContentType())
				if err != nil {
					t.Fatalf("%s: %v", in.Name, err)
				}
				if v, ok := o.CounterSum(ptd.Shed); ok {
					if v != 0 && in.Name != counter && (counter != "prefill" || in.Role != RolePrefill) {
						t.Errorf("%s counts %v shed requests, want none there", in.Name, v)
					}
					shed += v
				}
				if in.Engine == string(ptd.VLLM) {
					w, _ := o.Gauge(ptd.Waiting)
					c, okC := o.Gauge(ptd.WaitingCapacity)
					d, okD := o.Gauge(ptd.WaitingDeferred)
					if !okC || !okD {
						t.Errorf("%s: no waiting by reason", in.Name)
					}
					waiting += w
					byReason += c + d
				}
			}
			tr := m.TruthAt(at)
			if len(tr.Shed) != 1 || tr.Shed[0].Shed < 100 {
				t.Fatalf("shed truth %+v, want a group shedding", tr.Shed)
			}
			if shed != float64(tr.Shed[0].Shed) {
				t.Errorf("read %v shed requests, truth %+v", shed, tr.Shed[0])
			}
			if waiting != byReason {
				t.Errorf("waiting %v, by reason %v", waiting, byReason)
			}
		})
	}
	vllm := baseScenario().Groups[0]
	sgl := baseScenario().Groups[1]
	sgl.Prefill.Instances = 2
	f("vllm", vllm, "prefill")
	f("sglang", sgl, "prefill")
	epp := vllm
	epp.Router = string(ptd.LLMDEPP)
	f("llm-d", epp, epp.Name+"-router")
	dyn := vllm
	dyn.Engine, dyn.Connector, dyn.Router = string(ptd.TensorRTLLM), ConnectorUCX, string(ptd.DynamoFrontend)
	f("dynamo", dyn, dyn.Name+"-router")
}

// TensorRT-LLM counts no shed load of its own: capping its queue without
// a router in front is refused.
func TestShedNeedsACounter(t *testing.T) {
	sc := baseScenario()
	g := sc.Groups[0]
	g.Engine, g.Connector, g.MaxQueued = string(ptd.TensorRTLLM), ConnectorUCX, 4
	sc.Groups = []Group{g}
	if err := sc.Validate(); err == nil {
		t.Error("a TensorRT-LLM group shedding without a router validated")
	}
}
