package point

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// TestJSONRoundTrip: what the API writes decodes to the same point, absent
// values with their reasons included.
func TestJSONRoundTrip(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	down := Absent("down: connection refused")
	p := Point{
		Time: t0,
		Prefill: StagePoint{Instant: Val(7.5), Window: Val(7), Instances: 2, Up: 1, Partial: true, Missing: []string{"p1"},
			Running: Val(4), Waiting: Val(0), Queues: Queues{Bootstrap: Val(0), Inflight: Val(11), Prealloc: Absent("no queue_prealloc gauge in the exposition"), Transfer: Absent("no queue_transfer gauge")},
			KVUsage: Val(0.29), PromptTPS: Val(1e5), GenTPS: Absent("no generation_tokens counter"),
			TTFT: Quant{P50: Val(0.1), P90: Val(0.25), P99: Absent("no ttft histogram")}, ITL: Quant{P50: down, P90: down, P99: down}, E2E: Quant{P50: Val(1), P90: Val(2), P99: Val(3)}},
		KV: KVPoint{Instant: Absent("B_request is not set"), Window: Absent("B_request is not set"), BytesInstant: Val(6442450944), BytesWindow: Val(1.0 / 3),
			Transfers: Val(12), Failures: Val(0), Instances: 3, Up: 3, XferTime: Quant{P50: Val(0.01), P90: Absent("a"), P99: Absent("b")}},
		Decode:        StagePoint{Instant: Absent("no decode instance configured"), Window: Absent("no decode instance configured")},
		GlobalKVBytes: Absent("no target exports a KV byte counter"),
		Instances: []InstancePoint{
			{Target: "p0", Role: "prefill", Engine: "vllm", Up: true, Instant: Val(7.5), Window: Val(7), KVBytes: Val(1), KVBytesW: Val(2),
				Running: Val(4), Waiting: Val(2), Queues: Queues{Bootstrap: Val(1), Inflight: Val(2), Prealloc: Val(3), Transfer: Val(4)},
				KVUsage: Val(0.5), PromptTPS: Val(6), GenTPS: Val(7), WindowFrom: t0.Add(-4 * time.Second), WindowTo: t0},
			{Target: "p1", Role: "prefill", Engine: "sglang", Instant: down, Window: down, KVBytes: down, KVBytesW: down, Running: down, Waiting: down,
				Queues: Queues{Bootstrap: down, Inflight: down, Prealloc: down, Transfer: down}, KVUsage: down, PromptTPS: down, GenTPS: down},
		},
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var got Point
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	// The waiting by reason is not carried: it decodes absent.
	notSent := WaitingReasons{Capacity: Absent(whyNotInJSON), Deferred: Absent(whyNotInJSON)}
	p.Prefill.WaitingBy, p.Decode.WaitingBy = notSent, notSent
	for i := range p.Instances {
		p.Instances[i].WaitingDeferred = Absent(whyNotInJSON)
	}
	if !reflect.DeepEqual(got, p) {
		t.Errorf("round trip differs:\n got %+v\nwant %+v\njson %s", got, p, b)
	}
	again, _ := json.Marshal(got)
	if string(again) != string(b) {
		t.Errorf("re-encoding differs:\n%s\n%s", again, b)
	}
}

// TestJSONDecodeNeverZero: a value the JSON leaves out, or writes null
// without a reason, decodes absent, never as 0.
func TestJSONDecodeNeverZero(t *testing.T) {
	var p Point
	if err := json.Unmarshal([]byte(`{"time":"2026-11-29T12:00:00Z","prefill":{"requests_per_second":null,"requests_per_second_window":3}}`), &p); err != nil {
		t.Fatal(err)
	}
	f := func(name string, n Num, ok bool, v float64) {
		t.Helper()
		if n.OK() != ok || n.V != v || !ok && n.Why == "" {
			t.Errorf("%s = %+v, want ok=%v v=%v", name, n, ok, v)
		}
	}
	f("prefill window", p.Prefill.Window, true, 3)
	f("prefill instant (null)", p.Prefill.Instant, false, 0)
	f("prefill running (left out)", p.Prefill.Running, false, 0)
	f("prefill ttft p99 (left out)", p.Prefill.TTFT.P99, false, 0)
	f("decode window (stage left out)", p.Decode.Window, false, 0)
	f("global KV bytes (left out)", p.GlobalKVBytes, false, 0)
	f("prefill waiting for capacity (never carried)", p.Prefill.WaitingBy.Capacity, false, 0)
	if err := json.Unmarshal([]byte(`{"prefill":{"running":"4"}}`), &p); err == nil {
		t.Error("a string where a number belongs decoded without error")
	}
}
