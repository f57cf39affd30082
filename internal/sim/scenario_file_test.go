package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeTemp(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "custom.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadScenarioFile(t *testing.T) {
	p := writeTemp(t, `
base: kv-bound
model: Qwen/Qwen3-8B
kv_bytes_per_request: 1207959552
groups:
  - name: big
    engine: vllm
    connector: nixl
    rate: 3
    prefill: {instances: 3, dp: 2}
    decode:
      instances: 2
      step_time: 40ms
  - name: sgl
    engine: sglang
    rate: 1
    old_kv_gauge: true
restarts:
  - {instance: big-d1, at: 10s, down: 1500ms}
`)
	sc, err := LoadScenarioFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Name != "custom" || sc.Bottleneck != "kv" || sc.Model != "Qwen/Qwen3-8B" || sc.KVBytesPerRequest != 1207959552 {
		t.Fatalf("top level: %+v", sc)
	}
	g := sc.Groups[0]
	if g.Connector != ConnectorNIXL || g.Prefill.DP != 2 || g.Decode.StepTime != 40*time.Millisecond ||
		g.Prefill.TokensPerSec != 24576 || g.Transfer.Threads != 4 {
		t.Fatalf("group defaults not applied: %+v", g)
	}
	if sc.Groups[1].Connector != ConnectorMooncake || !sc.Groups[1].OldKVGauge {
		t.Fatalf("sglang group: %+v", sc.Groups[1])
	}
	if sc.Restarts[0].Down != 1500*time.Millisecond {
		t.Fatalf("restart: %+v", sc.Restarts[0])
	}
	if _, err := NewModel(sc, 1, testEpoch); err != nil {
		t.Fatal(err)
	}
}

func TestScenarioFileErrorsHaveLines(t *testing.T) {
	cases := []struct{ body, want string }{
		{"model: x\ngroups:\n  - name: a\n    engine: vllm\n    prefil: {instances: 1}\n", ":5: field prefil not found"},
		{"model: x\nstop_fraction: 2\n", ":2: stop_fraction: must be within [0, 1]"},
		{"groups:\n  - name: a\n    engine: vllm\n  - name: b\n    engine: tgi\n", ":5: groups[1].engine: must be vllm, sglang or trtllm"},
		{"groups:\n  - name: a\n    decode:\n      kv_slots: 1\n", ":4: groups[0].decode.kv_slots"},
		{"base: nope\n", ":1: base: unknown scenario"},
		{"model: [unclosed\n", "custom.yaml:"},
		{"restarts:\n  - instance: ghost\n", ":2: restarts[0].instance: unknown instance"},
		{"input_tokens: lots\n", ":1: cannot unmarshal"},
		{"restarts:\n  - {instance: vllm-p0, at: 10s, down: 5s}\n  - {instance: vllm-p0, at: 12s, down: 1s}\n", ":3: restarts[1].at: overlaps restarts[0]"},
	}
	for _, c := range cases {
		_, err := LoadScenarioFile(writeTemp(t, c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "custom.yaml") {
			t.Errorf("%q: error %v, want it to contain %q", c.body, err, c.want)
		}
	}
	if _, err := LoadScenarioFile("/nonexistent/x.yaml"); err == nil {
		t.Error("missing file accepted")
	}
}

func TestBuiltinsValid(t *testing.T) {
	for _, n := range ScenarioNames() {
		sc, err := LoadScenario(n)
		if err != nil || sc.Validate() != nil || sc.Name != n {
			t.Errorf("%s: %v %v", n, err, sc.Validate())
		}
	}
	if _, err := LoadScenario("nope"); err == nil {
		t.Error("unknown scenario accepted")
	}
	sc, _ := LoadScenario("balanced")
	sc.SetTotalRate(12)
	if sc.TotalRate() != 12 || sc.Groups[0].Rate != 8 {
		t.Fatalf("SetTotalRate: %+v", sc.Groups)
	}
}
