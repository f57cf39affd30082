package gen

import (
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
)

func TestPrometheusConfigTargets(t *testing.T) {
	in := Input{
		PtdmonAddr: "10.0.0.9:9433",
		Targets: []engine.Target{
			{Name: "vllm-p0", URL: "http://10.0.0.1:8000/metrics", Role: "prefill", Engine: "vllm", Labels: map[string]string{"cluster": "a"}},
			{Name: "sglang-d0", URL: "https://10.0.0.2:30000/", Role: "decode", Engine: engine.EngineAuto},
			{Name: "trt-p0", URL: "http://10.0.0.3:8000", Role: "prefill", Engine: "trtllm"},
		},
		FileSD: []string{"b.json", "a.json"},
	}
	b, err := PrometheusConfig(in)
	if err != nil {
		t.Fatal(err)
	}
	c := decodeAll(t, "prometheus.yml", b)[0]
	if got := get(c, "global", "scrape_interval"); got != "1s" {
		t.Errorf("scrape_interval = %v", got)
	}
	if got := get(c, "scrape_configs", 0, "static_configs", 0, "targets", 0); got != "10.0.0.9:9433" {
		t.Errorf("ptdmon target = %v", got)
	}
	engines := get(c, "scrape_configs", 1)
	if get(engines, "job_name") != JobEngines || get(engines, "scrape_interval") != "1s" {
		t.Fatalf("engines job: %v", engines)
	}
	tests := []struct {
		i                          int
		addr, scheme, path, engine string
		extra                      map[string]string
	}{
		{0, "10.0.0.1:8000", "http", "/metrics", "vllm", map[string]string{"cluster": "a"}},
		{1, "10.0.0.2:30000", "https", "/metrics", "", nil},
		// The relabelling moves trtllm's default path to /prometheus/metrics.
		{2, "10.0.0.3:8000", "http", "/metrics", "trtllm", nil},
	}
	for _, tt := range tests {
		sc := get(engines, "static_configs", tt.i)
		labels := get(sc, "labels").(map[string]any)
		if get(sc, "targets", 0) != tt.addr || labels["__scheme__"] != tt.scheme || labels["__metrics_path__"] != tt.path {
			t.Errorf("target %d: %v", tt.i, sc)
		}
		if e, _ := labels[hiddenEngine].(string); e != tt.engine {
			t.Errorf("target %d: engine %q, want %q", tt.i, e, tt.engine)
		}
		for k, v := range tt.extra {
			if labels[k] != v {
				t.Errorf("target %d: label %s = %v, want %s", tt.i, k, labels[k], v)
			}
		}
	}
	if got := get(engines, "file_sd_configs", 0, "files"); len(got.([]any)) != 2 || got.([]any)[0] != "a.json" {
		t.Errorf("file_sd files = %v (sorted, so the output is stable)", got)
	}
	if !strings.Contains(string(b), trtllmMetricsPath) {
		t.Error("no TensorRT-LLM metrics path relabelling")
	}
}

func TestInputCheck(t *testing.T) {
	ok := engine.Target{Name: "a", URL: "http://h:1/metrics", Role: "prefill", Engine: "vllm"}
	tests := []struct {
		name string
		in   Input
		want string
	}{
		{"ok", Input{Targets: []engine.Target{ok}, Window: 5 * time.Second}, ""},
		{"router", Input{Targets: []engine.Target{ok, {Name: "r", URL: "http://h:2/metrics", Role: engine.Router, Engine: engine.LLMDEPP}}, Window: 5 * time.Second}, ""},
		{"bad url", Input{Targets: []engine.Target{{Name: "a", URL: "h:1", Role: "prefill"}}, Window: 5 * time.Second}, "url"},
		{"no role", Input{Targets: []engine.Target{{Name: "a", URL: "http://h:1"}}, Window: 5 * time.Second}, "role"},
		{"bad engine", Input{Targets: []engine.Target{{Name: "a", URL: "http://h:1", Role: "decode", Engine: "tgi"}}, Window: 5 * time.Second}, "engine"},
		{"dup", Input{Targets: []engine.Target{ok, ok}, Window: 5 * time.Second}, "twice"},
		{"short window", Input{Targets: []engine.Target{ok}, Window: time.Second}, "window"},
	}
	for _, tt := range tests {
		err := tt.in.Check()
		if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: Check() = %v, want error containing %q", tt.name, err, tt.want)
		}
	}
}

func TestRecordNamesFollowWindow(t *testing.T) {
	for w, want := range map[time.Duration]string{5 * time.Second: "stage:ptd_requests:rate5s", 20 * time.Second: "stage:ptd_requests:rate20s", time.Minute: "stage:ptd_requests:rate1m"} {
		if got := RecordNames(promDuration(w)).Stage[1]; got != want {
			t.Errorf("window %s: %s, want %s", w, got, want)
		}
		n := 0
		for _, g := range Rules(Input{Window: w}).Groups {
			for _, r := range g.Rules {
				if r.Record == RecordNames(promDuration(w)).TargetCompleted[1] {
					n++
					if !strings.Contains(r.Expr, "["+promDuration(w)+"]") {
						t.Errorf("window %s: %s", w, r.Expr)
					}
				}
			}
		}
		if n != 2 {
			t.Errorf("window %s: %d windowed target rules, want one per path", w, n)
		}
	}
}

func TestKVSourceRestrictsEngineRules(t *testing.T) {
	sources := func(kv string) map[string]bool {
		out := map[string]bool{}
		for _, g := range Rules(Input{KVSource: kv}).Groups {
			for _, r := range g.Rules {
				if s := r.Labels["source"]; s != "" {
					out[s] = true
				}
			}
		}
		return out
	}
	if got := sources(""); len(got) != 7 {
		t.Errorf("auto: sources %v, want flagcx, nixl, mooncake, sglang, dynamo, nixl-telemetry, mooncake-te", got)
	}
	for _, kv := range []string{"nixl", "dynamo"} {
		if got := sources(kv); len(got) != 1 || !got[kv] {
			t.Errorf("%s: sources %v", kv, got)
		}
	}
	if got := sources("none"); len(got) != 0 {
		t.Errorf("none: sources %v", got)
	}
}
