package point

import (
	"slices"
	"testing"
)

func TestPoolInstances(t *testing.T) {
	point := func(engines ...string) []InstancePoint {
		out := make([]InstancePoint, len(engines))
		for i, e := range engines {
			out[i] = InstancePoint{Target: e + string(rune('0'+i)), Engine: e, Pool: e}
		}
		return out
	}
	targets := func(ips []InstancePoint) []string {
		var out []string
		for _, ip := range ips {
			out = append(out, ip.Target)
		}
		return out
	}
	f := func(name string, all []InstancePoint, group string, want []string, shared bool) {
		t.Helper()
		before := slices.Clone(all)
		got := poolInstances(all, group)
		if !slices.Equal(targets(got), want) {
			t.Errorf("%s: %v, want %v", name, targets(got), want)
		}
		if len(got) > 0 && (&got[0] == &all[slices.Index(targets(all), want[0])]) != shared {
			t.Errorf("%s: shares the point's instances = %v, want %v", name, !shared, shared)
		}
		// A view is only read; even an append must not reach the point.
		_ = append(got, InstancePoint{Target: "new", Engine: group, Pool: group})
		if !slices.Equal(targets(all), targets(before)) {
			t.Errorf("%s: the point's instances changed: %v", name, targets(all))
		}
	}
	f("one group", point("vllm", "vllm", "vllm"), "vllm", []string{"vllm0", "vllm1", "vllm2"}, true)
	f("listed group by group", point("vllm", "vllm", "sglang", "sglang"), "vllm", []string{"vllm0", "vllm1"}, true)
	f("a run in the middle", point("vllm", "sglang", "sglang", "trtllm"), "sglang", []string{"sglang1", "sglang2"}, true)
	f("interleaved", point("vllm", "sglang", "vllm", "sglang"), "vllm", []string{"vllm0", "vllm2"}, false)
	f("absent", point("vllm", "vllm"), "sglang", nil, false)
}
