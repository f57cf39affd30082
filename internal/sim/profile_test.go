package sim

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	ptd "github.com/ptdmon/ptdmon/internal/engine"
)

// toyFormat is a made-up engine's exposition: completions per finish reason
// and KV bytes sent, one series per DP engine (label dp).
type toyFormat struct{}

func (toyFormat) ContentType() string { return textContentType }

func (toyFormat) Render(dst []byte, v *InstanceView) []byte {
	dst = append(dst, "# HELP toysim:done_total Finished requests.\n# TYPE toysim:done_total counter\n"...)
	for _, s := range v.Engines {
		for i, r := range finishReasons {
			dst = appendSample(dst, "toysim:done_total", "", []label{{"dp", strconv.Itoa(s.Index)}, {"model", v.Model}},
				float64(s.Finished[i]), label{"reason", r})
		}
	}
	dst = append(dst, "# HELP toysim:kv_sent_bytes_total KV bytes sent.\n# TYPE toysim:kv_sent_bytes_total counter\n"...)
	for _, s := range v.Engines {
		dst = appendSample(dst, "toysim:kv_sent_bytes_total", "", []label{{"dp", strconv.Itoa(s.Index)}, {"model", v.Model}},
			float64(s.KV.BytesTransferred))
	}
	return dst
}

// TestSimulateRegisteredEngine registers a made-up engine with the engine
// package and a simulator profile, and nothing else: the simulator runs it,
// serves it over HTTP, and what its adapter reads is the simulator's truth.
func TestSimulateRegisteredEngine(t *testing.T) {
	const toy ptd.Engine = "toysim"
	ptd.Register(ptd.Adapter{
		Engine: toy, Display: "ToySim", Order: 99, Prefix: "toysim:", ModelLabel: "model",
		GroupLabels: []string{"dp"}, FinishedLabel: "reason",
		NotCompleted: []ptd.Reason{{Value: "abort", Metric: ptd.Aborted}, {Value: "error", Metric: ptd.Errored}},
		Families: []ptd.Family{
			{Name: "toysim:done_total", Type: model.MetricTypeCounter, Metric: ptd.Completed, Finished: true},
			{Name: "toysim:kv_sent_bytes_total", Type: model.MetricTypeCounter, Metric: ptd.KVBytes},
		},
	})
	t.Cleanup(func() { ptd.Unregister(toy) })
	// A combination no built-in engine has: decode reserves first (as
	// SGLang), and the router splits the request into two legs (as vLLM).
	RegisterProfile(Profile{Engine: toy, Format: toyFormat{}, Connectors: []string{"toylink"},
		PreallocFirst: true, SplitLegs: true})
	t.Cleanup(func() { UnregisterProfile(toy) })

	sc := baseScenario()
	sc.Name = "toy"
	g := sc.Groups[0]
	g.Name, g.Engine, g.Connector, g.Rate = "toy", string(toy), "", 5
	g.Prefill.Instances, g.Prefill.DP = 2, 2
	sc.Groups = []Group{g}
	sc.Restarts = []Restart{{Instance: "toy-p1", At: 12 * time.Second, Down: 3 * time.Second}}

	gl := sc.LoadModel().Groups[0]
	if gl.Gating != GatingPrealloc || gl.Connector != "toylink" || gl.Engine != string(toy) {
		t.Fatalf("load model of the toy group: gating %s, connector %q, engine %q", gl.Gating, gl.Connector, gl.Engine)
	}
	bad := sc
	bad.Groups = []Group{g}
	bad.Groups[0].Engine = "nosuch"
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "toysim") {
		t.Fatalf("an unknown engine's error does not list the registered ones: %v", err)
	}
	bad.Groups[0].Engine, bad.Groups[0].Connector = string(toy), ConnectorNIXL
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "toysim uses toylink") {
		t.Fatalf("a foreign connector is not refused: %v", err)
	}

	c, clk := startFake(t, sc)
	targets := c.Targets()
	if len(targets) != 4 {
		t.Fatalf("targets = %d, want 2 prefill + 2 decode", len(targets))
	}
	var prefillSeen, decodeSeen, kvSeen float64
	for _, at := range []time.Duration{9 * time.Second, 20*time.Second + 311*time.Millisecond, 40 * time.Second} {
		now := testEpoch.Add(at)
		clk.Set(now)
		tr := c.TruthAt(now)
		for _, tg := range targets {
			if tg.Engine != toy || !strings.HasSuffix(tg.URL, "/metrics") {
				t.Fatalf("target %+v", tg)
			}
			body, err := scrape(t, tg.URL)
			if err != nil {
				t.Fatalf("t=%v %s: %v", at, tg.Name, err)
			}
			o, err := ptd.NewReader(tg.Engine, tg.Role, ptd.KVAuto).Read(body, textContentType)
			if err != nil {
				t.Fatalf("t=%v %s: %v", at, tg.Name, err)
			}
			want := tr.Instance(tg.Name).Exported
			done, _ := o.CounterSum(ptd.Completed)
			kv, _ := o.CounterSum(ptd.KVBytes)
			wantDone := want.DecodeCompleted
			if tg.Role == ptd.Prefill {
				wantDone = want.PrefillCompleted
				prefillSeen = max(prefillSeen, done)
			} else {
				decodeSeen = max(decodeSeen, done)
			}
			kvSeen = max(kvSeen, kv)
			if done != float64(wantDone) || kv != float64(want.KVBytes) {
				t.Errorf("t=%v %s: adapter reads %v completions and %v KV bytes, truth is %d and %d",
					at, tg.Name, done, kv, wantDone, want.KVBytes)
			}
		}
	}
	// 5 req/s shared by two prefill instances and two decode instances:
	// after 40 s each has finished dozens.
	if prefillSeen < 30 || decodeSeen < 30 || kvSeen < 30*float64(LlamaKVBytes) {
		t.Errorf("too little traffic to check anything: %v prefill, %v decode completions, %v KV bytes on one instance",
			prefillSeen, decodeSeen, kvSeen)
	}
}
