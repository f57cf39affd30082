package ledger

import (
	"strings"
	"testing"

	"github.com/ptdmon/ptdmon/internal/kvsize"
)

func TestPoolName(t *testing.T) {
	f := func(labels map[string]string, model, want string, labelled bool) {
		t.Helper()
		got, byLabel := PoolName(labels, model)
		if got != want || byLabel != labelled {
			t.Errorf("PoolName(%v, %q) = %q, %v; want %q, %v", labels, model, got, byLabel, want, labelled)
		}
	}
	f(nil, "meta-llama/Llama-3.1-70B", "meta-llama/Llama-3.1-70B", false)
	f(map[string]string{"pool": "chat"}, "m", "chat", true)
	f(map[string]string{"ptd_pool": "chat", "pool": "other"}, "m", "chat", true)
	// The configured model label describes the model; it does not name a pool.
	f(map[string]string{"model": "llama-8b"}, "meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-8B", false)
	f(nil, "", "", false)
}

func TestPoolOf(t *testing.T) {
	meta := map[string]TargetMeta{
		"v-p0": {Pool: "llama-70b", Engine: "vllm"},
		"v-d0": {Pool: "llama-70b", Engine: "vllm"},
		"q-p0": {Pool: "qwen-32b", Engine: "vllm"},
		// One model on two engines: two pools, never a vLLM prefill
		// summed with an SGLang decode.
		"s-p0": {Pool: "qwen-32b", Engine: "sglang"},
		// A label names the pool as given, whatever the engines.
		"x-p0": {Pool: "batch", PoolLabelled: true, Engine: "vllm"},
		"x-d0": {Pool: "batch", PoolLabelled: true, Engine: "sglang"},
		"n-p0": {},
	}
	of := PoolOf(meta)
	for target, want := range map[string]string{
		"v-p0": "llama-70b", "v-d0": "llama-70b",
		"q-p0": "qwen-32b (vllm)", "s-p0": "qwen-32b (sglang)",
		"x-p0": "batch", "x-d0": "batch",
		"n-p0": "trtllm",
	} {
		ip := InstancePoint{Target: target, Engine: "trtllm"}
		if got := of(&ip); got != want {
			t.Errorf("%s: pool %q, want %q", target, got, want)
		}
	}
	if got := of(&InstancePoint{Target: "gone"}); got != "unknown" {
		t.Errorf("unknown target, unknown engine: pool %q, want unknown", got)
	}
}

func TestPoolRequest(t *testing.T) {
	own := map[string]kvsize.Request{"llama-70b": {Bytes: 320 << 10, Basis: kvsize.BasisConfig}}
	dep := kvsize.Request{Bytes: 128 << 10, Basis: kvsize.BasisFlag}
	f := func(pool string, own map[string]kvsize.Request, dep kvsize.Request, want int64, why string) {
		t.Helper()
		r, gotWhy := PoolRequest(pool, own, dep)
		if r.Bytes != want || !strings.Contains(gotWhy, why) || (why == "") != (gotWhy == "") {
			t.Errorf("PoolRequest(%q) = %d %q; want %d and a reason with %q", pool, r.Bytes, gotWhy, want, why)
		}
		if r.Bytes == 0 && r.Basis != kvsize.BasisUnset {
			t.Errorf("PoolRequest(%q): no bytes but basis %q", pool, r.Basis)
		}
	}
	// A pool's own B_request, whatever else is set.
	f("llama-70b", own, dep, 320<<10, "")
	f("llama-70b", own, kvsize.Request{}, 320<<10, "")
	// Pools have their own, this one not: the flag's number is another
	// model's.
	f("qwen-32b", own, dep, 0, `pool "qwen-32b" has no B_request of its own`)
	f("qwen-32b", own, kvsize.Request{}, 0, `pool "qwen-32b" has no B_request of its own`)
	// One model on two engines: each engine's pool has the model's.
	f("llama-70b (sglang)", own, dep, 320<<10, "")
	f("qwen-32b (sglang)", own, dep, 0, `pool "qwen-32b (sglang)" has no B_request of its own`)
	// No pool has its own: the one-pool settings serve every pool.
	f("qwen-32b", nil, dep, 128<<10, "")
	f("qwen-32b", nil, kvsize.Request{}, 0, "B_request is not set")
}
