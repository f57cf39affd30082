package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseValid(t *testing.T) {
	c, err := Parse([]byte(`
interval: 500ms
window: 10s
kv_bytes_per_request: 1073741824
targets:
  - name: p0
    url: http://10.0.0.1:8000/metrics
    role: prefill
    engine: vllm
    labels: {rack: a}
  - url: http://10.0.0.2:30000/metrics
`), "ptdmon.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Interval.Duration != 500*time.Millisecond || c.Timeout.Duration != 400*time.Millisecond || c.Window.Duration != 10*time.Second {
		t.Errorf("durations: %v %v %v", c.Interval, c.Timeout, c.Window)
	}
	if c.Targets[1].Name != "10.0.0.2:30000" || c.Targets[0].Labels["rack"] != "a" {
		t.Errorf("targets: %+v", c.Targets)
	}
	if c.Listen != DefaultListen {
		t.Errorf("listen = %q", c.Listen)
	}
}

func TestErrorsNameFileAndLine(t *testing.T) {
	f := func(yaml, want string) {
		t.Helper()
		c, err := Parse([]byte(yaml), "ptdmon.yaml")
		if err == nil {
			c.SetDefaults()
			err = c.Validate()
		}
		if err == nil {
			t.Fatalf("no error for:\n%s", yaml)
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q, want it to contain %q", err, want)
		}
	}
	f("interval: 1s\nbogus: 3\n", "ptdmon.yaml:2: unknown key bogus (want one of listen,")
	f("targets:\n  - url: http://a:1/metrics\n    rol: prefill\n", "ptdmon.yaml:3: field rol not found")
	f("interval: fast\n", "ptdmon.yaml:1: \"fast\" is not a duration")
	f("targets:\n  - url: http://a:1/m\n  - name: x\n    url: ftp://b/m\n", "ptdmon.yaml:3: target \"x\": url")
	f("targets:\n  - url: http://a:1/m\n    role: gateway\n", "ptdmon.yaml:2: target \"a:1\": role \"gateway\": want prefill, decode or router")
	f("targets:\n  - name: a\n    url: http://a:1/m\n  - name: a\n    url: http://b:1/m\n", "ptdmon.yaml:4: target name \"a\" is already used at ptdmon.yaml:2")
	f("interval: 1s\ntimeout: 2s\ntargets: [{url: 'http://a:1/m'}]\n", "timeout 2s must be shorter than interval")
	f("kv_source: rdma\ntargets: [{url: 'http://a:1/m'}]\n", "kv_source \"rdma\"")
	f("interval: 1s\n", "no targets")
	f("targets: [{url: 'http://a:1/m', engine: tgi}]\n", "engine \"tgi\"")
	f("kv_bytes_per_request: 5\nmodel: {config: c.json, seq_len: 8192}\ntargets: [{url: 'http://a:1/m'}]\n", "not both")
	f(":\n  - [\n", "ptdmon.yaml")
	f("targets:\n  - url: http://a:1/m\n    forward_pass_metrics: [\"http://a:20380\"]\n", "ptdmon.yaml:2: target \"a:1\": forward_pass_metrics \"http://a:20380\": want tcp://host:port")
	f("targets:\n  - url: http://a:1/m\n    forward_pass_metrics: [\"tcp://a\"]\n", "forward_pass_metrics \"tcp://a\": want tcp://host:port")
	f("targets:\n  - url: http://a:1/m\n    engine: trtllm\n    forward_pass_metrics: [\"tcp://a:1\"]\n", "forward_pass_metrics are vLLM's and SGLang's; engine is trtllm")
	f("targets:\n  - url: http://a:1/m\n    forward_pass_metrics: [\"tcp://a:1\", \"tcp://a:1\"]\n", "\"tcp://a:1\" listed twice")
	f("targets:\n  - url: http://a:1/m\n    forward_pass_metrics: tcp://a:1\n", "ptdmon.yaml:3")
}

// forward_pass_metrics reaches the target the scheduler reads.
func TestForwardPassMetricsResolve(t *testing.T) {
	c, err := Parse([]byte("targets:\n  - url: http://a:1/m\n    engine: sglang\n    forward_pass_metrics: [\"tcp://a:20380\", \"tcp://a:20381\"]\n"), "ptdmon.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	got := c.Targets[0].Resolve().ForwardPassMetrics
	if len(got) != 2 || got[0] != "tcp://a:20380" || got[1] != "tcp://a:20381" {
		t.Errorf("resolved endpoints %q", got)
	}
}

func TestTargetFlag(t *testing.T) {
	f := func(v, name, url string) {
		t.Helper()
		tg := TargetFlag("decode", v)
		if tg.Name != name || tg.URL != url || tg.Role != "decode" {
			t.Errorf("TargetFlag(%q) = %+v", v, tg)
		}
	}
	f("d0=http://h:1/metrics", "d0", "http://h:1/metrics")
	f("http://h:1/metrics", "h:1", "http://h:1/metrics")
	f("http://h:1/metrics?a=b", "h:1", "http://h:1/metrics?a=b")
}

func TestFileSD(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("a.json", `[{"targets": ["10.0.0.1:8000", "10.0.0.2:8000"], "labels": {"ptd_role": "prefill", "ptd_engine": "vllm", "rack": "r1"}},
 {"targets": ["10.0.0.3:8000"], "labels": {"ptd_role": "decode", "ptd_name": "d0", "__metrics_path__": "/prometheus/metrics"}}]`)
	write("b.yaml", "- targets: ['10.0.0.4:30000']\n  labels: {ptd_role: decode}\n")
	ts, err := ReadFileSD([]FileSDEntry{{Files: []string{filepath.Join(dir, "*.json"), filepath.Join(dir, "*.yaml")}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 4 {
		t.Fatalf("got %d targets: %+v", len(ts), ts)
	}
	if ts[0].URL != "http://10.0.0.1:8000/metrics" || ts[0].Role != "prefill" || ts[0].Engine != "vllm" || ts[0].Labels["rack"] != "r1" {
		t.Errorf("target 0: %+v", ts[0])
	}
	if ts[2].Name != "d0" || ts[2].URL != "http://10.0.0.3:8000/prometheus/metrics" {
		t.Errorf("target 2: %+v", ts[2])
	}
	bad := write("bad.json", "[{\"targets\": [\"a:1\"],\n \"lables\": {}}]")
	_, err = ReadFileSD([]FileSDEntry{{Files: []string{bad}}})
	if err == nil || !strings.Contains(err.Error(), "bad.json") || !strings.Contains(err.Error(), "lables") {
		t.Errorf("bad file_sd error = %v", err)
	}
}
