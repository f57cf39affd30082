package config

import (
	"testing"

	"github.com/ptdmon/ptdmon/internal/engine"
)

func TestTargetResolve(t *testing.T) {
	f := func(in Target, want engine.Target) {
		t.Helper()
		got := in.Resolve()
		if !got.Equal(want) {
			t.Errorf("%+v.Resolve() = %+v, want %+v", in, got, want)
		}
		if back := TargetFrom(got, in.DefinedAt).Resolve(); !back.Equal(got) {
			t.Errorf("TargetFrom(%+v).Resolve() = %+v", got, back)
		}
	}
	f(Target{Name: "p0", URL: "http://h:1/metrics", Role: "ctx", Engine: "auto", Labels: map[string]string{"rack": "a"}, DefinedAt: "ptdmon.yaml:3"},
		engine.Target{Name: "p0", URL: "http://h:1/metrics", Role: engine.Prefill, Engine: engine.EngineAuto, Labels: map[string]string{"rack": "a"}})
	f(Target{Name: "g0", URL: "http://h:2/metrics", Role: "gen", Engine: "trtllm", IterationStats: true},
		engine.Target{Name: "g0", URL: "http://h:2/metrics", Role: engine.Decode, Engine: engine.TensorRTLLM, IterationStats: true})
	f(Target{Name: "s0", URL: "http://h:3/metrics", Engine: "sglang"},
		engine.Target{Name: "s0", URL: "http://h:3/metrics", Role: engine.RoleUnknown, Engine: engine.SGLang})
	if (engine.Target{Name: "a", Labels: map[string]string{"x": "1"}}).Equal(engine.Target{Name: "a", Labels: map[string]string{"x": "2"}}) {
		t.Error("targets with different labels compare equal")
	}
}
