package sim

import (
	"strings"
	"testing"
	"time"
)

// An instance asleep takes no traffic and says so in engine_sleep_state,
// one series per engine and state; an awake vLLM instance says awake; the
// truth has the same. Only known vLLM instances can sleep, and never every
// instance of a role.
func TestAsleepInstances(t *testing.T) {
	sc := baseScenario()
	sc.Asleep = []string{"vllm-d1"}
	if err := sc.Validate(); err != nil {
		t.Fatal(err)
	}
	m, err := NewModel(sc, 3, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	m.AdvanceTo(60 * time.Second)
	tr := m.TruthAt(60 * time.Second)
	for _, c := range []struct {
		name             string
		awake, offloaded float64
	}{{"vllm-d0", 1, 0}, {"vllm-d1", 0, 1}} {
		body, _, err := m.Exposition(c.name, nil)
		if err != nil {
			t.Fatal(err)
		}
		fams := parseExpo(t, body)
		f := fams["vllm:engine_sleep_state"]
		if f == nil {
			t.Fatalf("%s: no engine_sleep_state", c.name)
		}
		got := map[string]float64{}
		for _, s := range f.Metric {
			st, _ := labelOf(s, "sleep_state")
			got[st] += s.GetGauge().GetValue()
		}
		if got["awake"] != c.awake || got["weights_offloaded"] != c.offloaded || got["discard_all"] != 0 || len(got) != 3 {
			t.Errorf("%s: sleep states %v, want awake %v, weights_offloaded %v", c.name, got, c.awake, c.offloaded)
		}
		it := tr.Instance(c.name)
		if it.Asleep != (c.awake == 0) {
			t.Errorf("%s: truth asleep %v", c.name, it.Asleep)
		}
		if done := it.DecodeCompleted; (done == 0) != it.Asleep {
			t.Errorf("%s: %d completed, asleep %v", c.name, done, it.Asleep)
		}
	}
	f := func(asleep []string, want string) {
		t.Helper()
		sc := baseScenario()
		sc.Asleep = asleep
		if err := sc.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("asleep %v: error %v, want %q", asleep, err, want)
		}
	}
	f([]string{"vllm-d9"}, "unknown instance")
	f([]string{"vllm-d0", "vllm-d0"}, "listed twice")
	f([]string{"vllm-d0", "vllm-d1"}, "none would serve")
	f([]string{"sglang-p0"}, "only vLLM exports its sleep state")
}
