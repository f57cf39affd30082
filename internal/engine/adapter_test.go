package engine

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
)

// A fourth engine is one Register call (plus its connectors): this test
// registers a made-up engine and reads its exposition through the normal
// Reader, checking every table field against values worked out by hand.
func TestReadNewEngine(t *testing.T) {
	const toy Engine = "toy"
	const toyKV KVSource = "toylink"
	Register(Adapter{
		Engine: toy, Aliases: []string{"toy-llm"}, Display: "ToyLLM", Order: 99,
		Prefix: "toy:", ModelLabel: "model", RoleLabel: "phase",
		GroupLabels: []string{"dp"}, RankLabels: []string{"tp"}, SplitLabels: []string{"lora"},
		FinishedLabel: "reason", NotCompleted: []Reason{{"cancel", Aborted}},
		Families: []Family{
			{Name: "toy:done_total", Type: model.MetricTypeCounter, Metric: Completed, Finished: true},
			{Name: "toy:active", Type: model.MetricTypeGauge, Metric: Running},
			{Name: "toy:kv_fill", Type: model.MetricTypeGauge, Metric: KVUsage},
			{Name: "toy:cache_fill", Type: model.MetricTypeGauge, Metric: KVUsage, Deprecated: true},
			{Name: "toy:ttft_ms", Type: model.MetricTypeHistogram, Metric: TTFT, LEScale: 1e-3},
		},
	})
	RegisterConnector(Connector{Source: toyKV, Engine: toy, Order: 99, Families: []Family{
		{Name: "toy:link_kib", Type: model.MetricTypeHistogram, Metric: KVBytes, Sizes: true, Count: KVTransfers, Scale: 1024},
	}})
	t.Cleanup(func() { Unregister(toy) })

	if e, ok := ParseEngine("toy-llm"); !ok || e != toy {
		t.Fatalf("ParseEngine(toy-llm) = %q, %v", e, ok)
	}
	if k, ok := ParseKVSource("toylink"); !ok || k != toyKV {
		t.Fatalf("ParseKVSource(toylink) = %q, %v", k, ok)
	}
	if !slices.Contains(KnownNames(), "toy:link_kib") || !strings.Contains(EngineChoices(), "toy") {
		t.Error("the new engine's names are not listed")
	}

	// Two DP groups; group 0 has two TP replicas (only tp=0 counts); a
	// per-lora split; the deprecated cache_fill beside the current kv_fill.
	body := `# TYPE toy:done_total counter
toy:done_total{model="m",phase="prefill",dp="0",tp="0",reason="stop"} 10
toy:done_total{model="m",phase="prefill",dp="0",tp="1",reason="stop"} 10
toy:done_total{model="m",phase="prefill",dp="0",tp="0",reason="cancel"} 3
toy:done_total{model="m",phase="prefill",dp="1",tp="0",reason="stop"} 5
toy:done_total{model="m",phase="prefill",dp="1",tp="0",reason="stop",lora="a"} 4
# TYPE toy:active gauge
toy:active{model="m",phase="prefill",dp="0",tp="0"} 2
toy:active{model="m",phase="prefill",dp="1",tp="0"} 7
# TYPE toy:kv_fill gauge
toy:kv_fill{model="m",phase="prefill",dp="0",tp="0"} 0.25
toy:kv_fill{model="m",phase="prefill",dp="1",tp="0"} 0.75
# TYPE toy:cache_fill gauge
toy:cache_fill{model="m",phase="prefill",dp="0",tp="0"} 0.9
# TYPE toy:ttft_ms histogram
toy:ttft_ms_bucket{model="m",phase="prefill",dp="0",tp="0",le="100"} 1
toy:ttft_ms_bucket{model="m",phase="prefill",dp="0",tp="0",le="+Inf"} 2
toy:ttft_ms_sum{model="m",phase="prefill",dp="0",tp="0"} 550
toy:ttft_ms_count{model="m",phase="prefill",dp="0",tp="0"} 2
# TYPE toy:link_kib histogram
toy:link_kib_bucket{model="m",phase="prefill",dp="0",tp="0",le="+Inf"} 4
toy:link_kib_sum{model="m",phase="prefill",dp="0",tp="0"} 4096
toy:link_kib_count{model="m",phase="prefill",dp="0",tp="0"} 4
# TYPE toy:unknown gauge
toy:unknown 1
`
	r := NewReader(EngineAuto, RoleUnknown, KVAuto)
	r.Explain()
	o, err := r.Read([]byte(body), "")
	if err != nil {
		t.Fatal(err)
	}
	if o.Engine != toy || o.Role != Prefill || o.Model != "m" {
		t.Errorf("engine/role/model = %s/%s/%s, want toy/prefill/m", o.Engine, o.Role, o.Model)
	}
	for _, c := range []struct {
		m    Metric
		want float64
	}{{Completed, 10 + 5}, {Aborted, 3}, {KVBytes, 4096 * 1024}, {KVTransfers, 4}} {
		if v, ok := o.CounterSum(c.m); !ok || v != c.want {
			t.Errorf("%s = %v (%v), want %v", c.m, v, ok, c.want)
		}
	}
	if v, _ := o.Gauge(Running); v != 9 {
		t.Errorf("running = %v, want 2+7", v)
	}
	if v, _ := o.Gauge(KVUsage); v != 0.5 {
		t.Errorf("kv usage = %v, want the mean of 0.25 and 0.75 (cache_fill is the old name)", v)
	}
	h := o.Histograms[TTFT.HistogramIndex()]
	if !h.Present || h.Count != 2 || math.Abs(h.Sum-0.55) > 1e-12 || h.Buckets[0].UpperBound != 0.1 {
		t.Errorf("ttft = %+v, want count 2, sum 0.55 s, first bound 0.1 s", h)
	}
	var why []string
	for _, ig := range o.Ignored {
		why = append(why, ig.Family+": "+ig.Reason)
	}
	for _, want := range []string{"toy:unknown: not used", "toy:cache_fill: deprecated", "toy:done_total: per-lora"} {
		if !slices.ContainsFunc(why, func(s string) bool { return strings.HasPrefix(s, want) }) {
			t.Errorf("ignored %q, want an entry %q", why, want)
		}
	}

	// Selecting another KV source drops the connector's bytes only.
	r = NewReader(toy, Prefill, KVNIXL)
	if o, err = r.Read([]byte(body), ""); err != nil {
		t.Fatal(err)
	}
	if _, ok := o.CounterSum(KVBytes); ok {
		t.Error("toylink bytes read with kv_source nixl")
	}
	// Through the collector's entry point, with the fetch time as sample time.
	src, err := NewBodyReader(BodyReaderConfig{Engine: toy, Role: Prefill})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1e9, 0)
	if o, got, err := src.Read([]byte(body), "", at); err != nil || !got.Equal(at) || o.Engine != toy {
		t.Errorf("NewBodyReader read: %v at %v", err, got)
	}
	// Mixed with another engine, detection refuses to guess.
	if _, err := NewReader(EngineAuto, Prefill, KVAuto).Read([]byte(body+"vllm:num_requests_running 1\n"), ""); !errors.Is(err, ErrUnusable) || !strings.Contains(err.Error(), "toy:") {
		t.Errorf("mixed exposition: %v", err)
	}
}

// Detection is by family prefix: a vLLM exposition that exports only
// histograms is still vLLM, and a TensorRT-LLM one of only bare names is
// TensorRT-LLM.
func TestDetectByPrefix(t *testing.T) {
	f := func(body string, want Engine) {
		t.Helper()
		o, err := NewReader(EngineAuto, Decode, KVAuto).Read([]byte(body), "")
		if err != nil {
			t.Fatalf("%.40q: %v", body, err)
		}
		if o.Engine != want {
			t.Errorf("%.40q: engine %q, want %q", body, o.Engine, want)
		}
	}
	f("# TYPE vllm:e2e_request_latency_seconds histogram\nvllm:e2e_request_latency_seconds_bucket{le=\"+Inf\"} 3\nvllm:e2e_request_latency_seconds_sum 1.5\n", VLLM)
	f("sglang:queue_time_seconds_count{tp_rank=\"0\"} 4\n", SGLang)
	f("num_requests_running 2\n", TensorRTLLM)
	f("trtllm_kv_transfer_bytes_sum 10\n", TensorRTLLM)
	// Only families ptdmon does not read: detected all the same.
	f("# TYPE vllm:request_generation_tokens histogram\nvllm:request_generation_tokens_bucket{le=\"+Inf\"} 3\n", VLLM)
	f("vllm:request_success_created 1.7e9\n", VLLM)
	body, err := os.ReadFile(filepath.Join("testdata", "vllm_unread_histograms.txt"))
	if err != nil {
		t.Fatal(err)
	}
	f(string(body), VLLM)
	ms, err := Detect(body, "")
	if err != nil || len(ms) != 1 || ms[0] != (Match{Engine: VLLM, Prefix: "vllm:", Families: 2}) {
		t.Errorf("Detect = %+v, %v; want vllm: with 2 families", ms, err)
	}
	// Both prefixes without a family read: still refused as mixed.
	if _, err := NewReader(EngineAuto, Decode, KVAuto).Read([]byte("vllm:request_generation_tokens_count 1\nsglang:unknown_thing 2\n"), ""); !errors.Is(err, ErrUnusable) || !strings.Contains(err.Error(), "mixes") {
		t.Errorf("two engines' unread families: %v", err)
	}
}

// Detect names the prefix each engine's families carry, or none when only
// bare names of an engine with an optional prefix are there.
func TestDetect(t *testing.T) {
	f := func(body string, want ...Match) {
		t.Helper()
		got, err := Detect([]byte(body), "")
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%.60q: %+v, %v; want %+v", body, got, err, want)
		}
	}
	f("process_cpu_seconds_total 1\n")
	f("num_requests_running 2\nnum_requests_waiting 1\n", Match{Engine: TensorRTLLM, Families: 2})
	f("num_requests_running 2\ntrtllm_num_requests_waiting 1\n", Match{Engine: TensorRTLLM, Prefix: "trtllm_", Families: 2})
	f("vllm:a_bucket{le=\"1\"} 1\nvllm:a_sum 1\nvllm:a_count 1\nvllm:a_created 1\nvllm:b 1\n", Match{Engine: VLLM, Prefix: "vllm:", Families: 3})
	f("sglang:x 1\nvllm:y 1\n", Match{Engine: VLLM, Prefix: "vllm:", Families: 1}, Match{Engine: SGLang, Prefix: "sglang:", Families: 1})
}

// Every registered table is consistent: names carry their adapter's
// prefix (or are bare in an adapter whose prefix is optional), connectors
// name a registered engine, size histograms name their count metric.
func TestRegisteredTables(t *testing.T) {
	engines := map[Engine]bool{}
	for _, a := range Adapters() {
		engines[a.Engine] = true
		for _, f := range a.Families {
			if !strings.HasPrefix(f.Name, a.Prefix) && !a.PrefixOptional && !a.Listed {
				t.Errorf("%s: %s lacks the prefix %s", a.Engine, f.Name, a.Prefix)
			}
			if f.Skip == "" && f.Metric.Kind() == KindHistogram && f.Type != model.MetricTypeHistogram {
				t.Errorf("%s: %s: a histogram metric in a %s family", a.Engine, f.Name, f.Type)
			}
			if f.Sizes && (f.Metric.Kind() != KindCounter || f.Count.Kind() != KindCounter) {
				t.Errorf("%s: %s: a size histogram is read as two counters", a.Engine, f.Name)
			}
			if f.Skip == "" && f.Type != model.MetricTypeHistogram && f.Metric.Kind() == KindHistogram {
				t.Errorf("%s: %s: %s is a histogram", a.Engine, f.Name, f.Metric)
			}
		}
	}
	for _, c := range Connectors() {
		if !engines[c.Engine] {
			t.Errorf("connector %s names unregistered engine %s", c.Source, c.Engine)
		}
		if _, ok := ParseKVSource(string(c.Source)); !ok {
			t.Errorf("connector %s not accepted as kv_source", c.Source)
		}
	}
	if got := EngineChoices(); got != "vllm, ray-vllm, sglang, trtllm, nixl-telemetry, mooncake-te, dynamo-frontend, llm-d-epp, sglang-gateway, vllm-router or auto" {
		t.Errorf("EngineChoices = %q", got)
	}
	if got := KVSourceChoices(); got != "auto, flagcx, nixl, mooncake, sglang, dynamo, nixl-telemetry, mooncake-te or none" {
		t.Errorf("KVSourceChoices = %q", got)
	}
	if got := KVSourceDisplays(); got != "FlagCX, NIXL, Mooncake, SGLang, Dynamo, NIXL telemetry or Mooncake transfer engine" {
		t.Errorf("KVSourceDisplays = %q", got)
	}
	if !SGLang.WaitingKVReady() || VLLM.WaitingKVReady() || TensorRTLLM.WaitingKVReady() || Engine("nope").WaitingKVReady() {
		t.Error("WaitingKVReady: want SGLang only")
	}
}
