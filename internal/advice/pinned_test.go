package advice

import (
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// batchLimited is llm-d-inference-sim's P/D deployment as a vLLM: 2 prefill
// instances and 1 decode instance whose batch of 4 is full, 20 requests
// waiting in front of it, its KV cache far from full, and one sample of 3
// running every 13 s, between a finish and the next admission.
func batchLimited(n int) []ledger.Point {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	out := make([]ledger.Point, n)
	for i := range out {
		running := 4.0
		if i%13 == 6 {
			running = 3
		}
		inst := func(target, role string, rate, run, wait float64) ledger.InstancePoint {
			return ledger.InstancePoint{Target: target, Role: role, Engine: "vllm", Up: true,
				Instant: ledger.Val(rate), Window: ledger.Val(rate), Running: ledger.Val(run), Waiting: ledger.Val(wait),
				KVUsage: ledger.Val(0.3), KVBytes: ledger.Absent("no KV"), KVBytesW: ledger.Absent("no KV")}
		}
		stagePt := func(rate, run, wait float64, n int) ledger.StagePoint {
			return ledger.StagePoint{Instant: ledger.Val(rate), Window: ledger.Val(rate), Instances: n, Up: n,
				Running: ledger.Val(run), Waiting: ledger.Val(wait), KVUsage: ledger.Val(0.3),
				PromptTPS: ledger.Val(100 * rate), GenTPS: ledger.Val(10 * rate)}
		}
		out[i] = ledger.Point{
			Time:    t0.Add(time.Duration(i) * time.Second),
			Prefill: stagePt(2, 2, 0, 2),
			Decode:  stagePt(2, running, 20, 1),
			KV:      ledger.KVPoint{Instant: ledger.Absent("no KV"), Window: ledger.Absent("no KV")},
			Instances: []ledger.InstancePoint{
				inst("p0", "prefill", 1, 1, 0), inst("p1", "prefill", 1, 1, 0),
				inst("d0", "decode", 2, running, 20),
			},
		}
	}
	return out
}

// TestBatchLimitedDecodeSaturates: where the verdict says Decode-bound (a
// pinned batch with requests waiting), the advisor learns decode's
// capacity rather than saying it is not known until decode saturates.
func TestBatchLimitedDecodeSaturates(t *testing.T) {
	pts := batchLimited(120)
	if v := diagnose.Diagnose(pts, diagnose.Config{}); v.Class != diagnose.DecodeBound {
		t.Fatalf("verdict %q, want decode-bound: %q", v.Class, v.Evidence)
	}
	caps := Learn(pts, Options{Window: 5 * time.Second})
	d := caps[2]
	if !d.PerInstance.OK() {
		t.Fatalf("decode capacity absent (%s) while the verdict says Decode-bound", d.PerInstance.Why)
	}
	if d.PerInstance.V != 2 {
		t.Errorf("decode capacity %g req/s per instance, want the 2 it carries at its limit", d.PerInstance.V)
	}
}

// TestDeferredWaitingIsNotDecodeSaturation: vLLM's waiting by reason. The
// same pinned batch with its 20 waiting split: where some wait for decode
// capacity, decode is saturated; where every one is deferred (waiting for
// its KV), decode has room for decode work, pinned batch or full KV cache
// alike, and its capacity is not learned. An engine that does not split its
// waiting keeps the rule without the split.
func TestDeferredWaitingIsNotDecodeSaturation(t *testing.T) {
	f := func(name string, deferred ledger.Num, kvUsage float64, learned bool) {
		t.Helper()
		pts := batchLimited(120)
		for i := range pts {
			d := &pts[i].Instances[2]
			d.WaitingDeferred, d.KVUsage = deferred, ledger.Val(kvUsage)
			pts[i].Decode.KVUsage = ledger.Val(kvUsage)
		}
		d := Learn(pts, Options{Window: 5 * time.Second})[2]
		if d.PerInstance.OK() != learned {
			t.Errorf("%s: decode capacity %+v, want learned %v", name, d.PerInstance, learned)
		}
	}
	f("5 of 20 wait for capacity", ledger.Val(15), 0.3, true)
	f("all 20 deferred", ledger.Val(20), 0.3, false)
	f("all 20 deferred, the KV cache full of them", ledger.Val(20), 0.97, false)
	f("no split", ledger.Absent("no requests_waiting_deferred gauge in the exposition"), 0.3, true)
	f("no split, the KV cache full", ledger.Absent("no requests_waiting_deferred gauge in the exposition"), 0.97, true)
}
