package journey

import (
	"testing"
	"time"
)

// Each request's miss is blamed on the phase built to be its longest.
func TestMisses(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	// Two legs on one clock: queue q, prefill pf, then the decode leg
	// starts at the prefill leg's end and waits kv for the remote KV,
	// then decodes for dec seconds.
	rec := func(q, pf, kv, dec float64) Record {
		pEnd := t0.Add(dur(q + pf))
		p := &Leg{RequestID: "r", Start: t0, End: pEnd, Queue: q, TTFT: q + pf, Prefill: pf, Decode: 0, E2E: q + pf,
			MaxTokens: 1, PromptTokens: -1, CompletionTokens: -1}
		d := &Leg{RequestID: "r", Start: pEnd, End: pEnd.Add(dur(kv + dec)), Queue: kv, TTFT: kv + 0.01, Prefill: 0.01,
			Decode: dec - 0.01, E2E: kv + dec, MaxTokens: 100, PromptTokens: -1, CompletionTokens: -1}
		return join(p, d, nil)
	}
	f := func(r Record, ttft, e2e float64, want ...string) {
		t.Helper()
		got := Misses(&r, ttft, e2e)
		if len(got) != len(want)/2 {
			t.Fatalf("misses %+v, want %v", got, want)
		}
		for i, m := range got {
			if m.SLO != want[2*i] || string(m.Blame) != want[2*i+1] {
				t.Errorf("miss %d: %s blamed on %q, want %s on %s", i, m.SLO, m.Blame, want[2*i], want[2*i+1])
			}
			if m.Share <= 0 || m.Share > 1 {
				t.Errorf("miss %d: share %v", i, m.Share)
			}
		}
	}
	f(rec(2, 0.3, 0.1, 5), 1, 10, SLOTTFT, "queue") // TTFT 2.41 s
	f(rec(0.1, 3, 0.1, 5), 1, 6, SLOTTFT, "prefill", SLOE2E, "decode")
	f(rec(0.1, 0.3, 4, 2), 1, 6, SLOTTFT, "kv_transfer", SLOE2E, "kv_transfer")
	f(rec(0.1, 0.3, 0.1, 9), 1, 5, SLOE2E, "decode") // TTFT 0.51 s within
	f(rec(0.1, 0.3, 0.1, 9), 0, 0)                   // no SLO
	// A decode leg alone: no phase before its first token is known.
	d := join(nil, &Leg{RequestID: "x", Start: t0, End: t0.Add(3 * time.Second), Queue: -1, TTFT: 2, Prefill: -1, Decode: 1, E2E: 3,
		MaxTokens: -1, PromptTokens: -1, CompletionTokens: -1}, nil)
	if m := Misses(&d, 1, 0); len(m) != 1 || m[0].Blame != "" || m[0].Reason == "" {
		t.Errorf("unknown phases: %+v, want a miss without blame, with a reason", m)
	}
}
