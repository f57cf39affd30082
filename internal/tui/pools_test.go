package tui

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ptdmon/ptdmon/internal/api"
	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// TestPoolLines: with two pools, each has a line with its own rates and its
// own verdict, and a pool's absent KV req/s says why.
func TestPoolLines(t *testing.T) {
	var s Snapshot
	if err := json.Unmarshal([]byte(snapJSON), &s); err != nil {
		t.Fatal(err)
	}
	const why = `pool "qwen" has no B_request: set pools: qwen: kv_bytes_per_request or model`
	s.Pools = []api.Pool{
		{Name: "llama-70b", Model: "meta-llama/Llama-3.1-70B-Instruct", Prefill: ledger.StagePoint{Window: ledger.Val(2)}, KV: ledger.KVPoint{Window: ledger.Val(1.5)}, Decode: ledger.StagePoint{Window: ledger.Val(1.5)}},
		{Name: "qwen", Model: "Qwen/Qwen2.5-32B-Instruct", Prefill: ledger.StagePoint{Window: ledger.Val(3)}, KV: ledger.KVPoint{Window: ledger.Absent(why)}, Decode: ledger.StagePoint{Window: ledger.Val(3)}},
	}
	s.Verdict.Groups = []diagnose.GroupVerdict{
		{Group: "llama-70b", Class: diagnose.KVBound, Headline: diagnose.Headline(diagnose.KVBound)},
		{Group: "qwen", Class: diagnose.Balanced, Headline: diagnose.Headline(diagnose.Balanced)},
	}
	var b strings.Builder
	Render(&b, &s, nil, 160)
	lines := map[string]string{}
	for l := range strings.Lines(b.String()) {
		if f := strings.Fields(l); len(f) > 0 {
			lines[f[0]] = l
		}
	}
	for name, want := range map[string][]string{
		"llama-70b": {" 2.00 ", " 1.50 ", diagnose.Headline(diagnose.KVBound)},
		"qwen":      {" 3.00 ", "—", diagnose.Headline(diagnose.Balanced)},
	} {
		for _, w := range want {
			if !strings.Contains(lines[name], w) {
				t.Errorf("pool %s line %q lacks %q\n%s", name, lines[name], w, b.String())
			}
		}
	}
	if !strings.Contains(b.String(), "  KV absent: "+why) {
		t.Errorf("qwen's absent KV without its reason:\n%s", b.String())
	}
}

// TestPoolNamesReadApart: two pools of one model on two engines are told
// apart in every pool table: whole at 160 columns, cut in the middle at 80
// so that the engine stays in view.
func TestPoolNamesReadApart(t *testing.T) {
	var s Snapshot
	if err := json.Unmarshal([]byte(snapJSON), &s); err != nil {
		t.Fatal(err)
	}
	names := []string{"meta-llama/Llama-3.1-8B-Instruct (vllm)", "meta-llama/Llama-3.1-8B-Instruct (sglang)"}
	ph := ledger.AbsentPhases("none")
	ph.Queue = ledger.Val(0.1)
	fail := ledger.Failures{}
	for _, n := range names {
		s.Pools = append(s.Pools, api.Pool{Name: n, Model: "meta-llama/Llama-3.1-8B-Instruct", TTFTPhases: &ph, KVFailures: &fail,
			Prefill: ledger.StagePoint{Window: ledger.Val(2)}, KV: ledger.KVPoint{Window: ledger.Val(2)}, Decode: ledger.StagePoint{Window: ledger.Val(2)}})
	}
	f := func(width int, want []string) {
		t.Helper()
		var b strings.Builder
		Render(&b, &s, nil, width)
		for _, w := range want {
			// The pools, failures and phases tables each name it.
			n := 0
			for l := range strings.Lines(b.String()) {
				if strings.HasPrefix(l, "meta-") && strings.Contains(l, w+" ") {
					n++
				}
			}
			if n != 3 {
				t.Errorf("width %d: %d lines name %q, want 3:\n%s", width, n, w, b.String())
			}
		}
	}
	f(160, names)
	f(80, []string{"(vllm)", "(sglang)"})
}
