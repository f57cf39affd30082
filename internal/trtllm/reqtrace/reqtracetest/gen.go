// Package reqtracetest generates TensorRT-LLM perf-metrics records from
// known true timelines, so tests can check what reqtrace computes against
// answers derived independently of it. It deliberately does not import
// reqtrace: the expected values come from the timeline, not from the code
// under test.
package reqtracetest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
)

// Timeline is one request on the single true clock (seconds).
type Timeline struct {
	ID            uint64
	DisaggArrival float64
	Dispatch      float64
	CtxSrvArrival float64
	CtxArrival    float64
	CtxSched      float64
	CtxFirst      float64 // = ctx last token: the ctx phase makes one token
	CtxSrvFirst   float64
	GenSrvArrival float64
	GenArrival    float64
	KVStart       float64
	KVEnd         float64
	GenSched      float64
	GenFirst      float64
	GenSrvFirst   float64
	DisaggFirst   float64
	GenLast       float64
	OutputTokens  int
}

// Want holds the true spans of docs/trtllm.md#phases, computed from the timeline.
type Want struct {
	Queue, Prefill, KV, TTFT, Decode, E2E, TPOT float64
}

// Want computes the true spans straight from the definitions.
func (t Timeline) Want() Want {
	w := Want{
		Queue:   t.CtxSched - t.CtxArrival,
		Prefill: t.CtxFirst - t.CtxSched,
		KV:      t.KVEnd - t.KVStart,
		TTFT:    t.DisaggFirst - t.DisaggArrival,
		Decode:  t.GenLast - t.DisaggFirst,
		E2E:     t.GenLast - t.DisaggArrival,
	}
	w.TPOT = w.Decode / float64(t.OutputTokens-1)
	return w
}

// FirstLargeID is above 2^53: float64 cannot represent it (it would become
// ...992), so any float64 round trip shows.
const FirstLargeID uint64 = 9007199254740993

// Timelines makes n deterministic, causally ordered timelines starting at
// base seconds, with ids from FirstLargeID upwards.
func Timelines(n int, seed uint64, base float64) []Timeline {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	u := func(lo, hi float64) float64 { return lo + (hi-lo)*rng.Float64() }
	out := make([]Timeline, n)
	for i := range out {
		var t Timeline
		t.ID = FirstLargeID + uint64(i)*7919
		t.DisaggArrival = base + float64(i)*0.01 + u(0, 0.005)
		t.Dispatch = t.DisaggArrival + u(0.0002, 0.001)
		t.CtxSrvArrival = t.Dispatch + u(0.0001, 0.0008)
		t.CtxArrival = t.CtxSrvArrival + u(0.001, 0.004)
		t.CtxSched = t.CtxArrival + u(0.0005, 0.08)
		t.CtxFirst = t.CtxSched + u(0.05, 0.4)
		t.CtxSrvFirst = t.CtxFirst + u(0.0003, 0.002)
		t.GenSrvArrival = t.CtxSrvFirst + u(0.0005, 0.003)
		t.GenArrival = t.GenSrvArrival + u(0.0005, 0.003)
		t.KVStart = t.GenArrival + u(0.0005, 0.004)
		t.KVEnd = t.KVStart + u(0.005, 0.05)
		t.GenSched = t.KVEnd + u(0.001, 0.01)
		t.GenFirst = t.GenSched + u(0.01, 0.05)
		t.GenSrvFirst = t.GenFirst + u(0.0002, 0.001)
		t.DisaggFirst = t.GenSrvFirst + u(0.0003, 0.002)
		t.OutputTokens = 2 + rng.IntN(600)
		t.GenLast = t.GenFirst + float64(t.OutputTokens-1)*u(0.01, 0.04)
		out[i] = t
	}
	return out
}

// Offsets are worker clock − true clock, per worker. The disagg server's
// clock is the true clock.
type Offsets struct{ Ctx, Gen float64 }

// Servers as the records name them.
const (
	CtxServer = "10.0.1.21:8001"
	GenServer = "10.0.2.31:8002"
)

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

type obj struct{ b bytes.Buffer }

func (o *obj) kv(k, raw string) {
	if o.b.Len() > 0 {
		o.b.WriteByte(',')
	}
	fmt.Fprintf(&o.b, "%q:%s", k, raw)
}
func (o *obj) f(k string, v float64) { o.kv(k, num(v)) }
func (o *obj) s(k, v string)         { o.kv(k, strconv.Quote(v)) }
func (o *obj) String() string        { return "{" + o.b.String() + "}" }

func (t Timeline) id() string { return strconv.FormatUint(t.ID, 10) }

func (t Timeline) ctxTiming(off float64, full bool) string {
	var o obj
	o.f("arrival_time", t.CtxArrival+off)
	o.f("last_token_time", t.CtxFirst+off)
	if full {
		o.f("server_arrival_time", t.CtxSrvArrival+off)
		o.f("server_first_token_time", t.CtxSrvFirst+off)
	}
	o.f("first_scheduled_time", t.CtxSched+off)
	o.f("first_token_time", t.CtxFirst+off)
	return o.String()
}

func (t Timeline) genTiming(off float64, full, kv bool) string {
	var o obj
	o.f("arrival_time", t.GenArrival+off)
	o.f("last_token_time", t.GenLast+off)
	if full {
		o.f("server_arrival_time", t.GenSrvArrival+off)
		o.f("server_first_token_time", t.GenSrvFirst+off)
	}
	if kv {
		o.f("kv_cache_transfer_start", t.KVStart+off)
		o.f("kv_cache_transfer_end", t.KVEnd+off)
	}
	o.f("first_scheduled_time", t.GenSched+off)
	o.f("first_token_time", t.GenFirst+off)
	return o.String()
}

func phase(id, timing string, extra string) string {
	return `{"request_id":` + id + `,"perf_metrics":{` + extra + `"timing_metrics":` + timing + `}}`
}

// DisaggA is a generation-A disagg item (GET /perf_metrics of the disagg
// server, docs/trtllm.md#generation-a): no status, no disagg_request_id, "http://"
// servers, the ctx id as the join key.
func (t Timeline) DisaggA(off Offsets) string {
	var o obj
	o.s("ctx_server", "http://"+CtxServer)
	o.s("gen_server", "http://"+GenServer)
	o.f("disagg_server_arrival_time", t.DisaggArrival)
	o.f("disagg_ctx_dispatch_time", t.Dispatch)
	o.f("disagg_server_first_token_time", t.DisaggFirst)
	o.kv("ctx_perf_metrics", phase(t.id(), t.ctxTiming(off.Ctx, true), `"first_iter":10,"last_iter":10,`))
	gen := `{"request_id":77,"ctx_request_id":` + t.id() + `,"perf_metrics":{"first_iter":11,"last_iter":90,"timing_metrics":` +
		t.genTiming(off.Gen, true, true) + `}}`
	o.kv("gen_perf_metrics", gen)
	return o.String()
}

// DisaggB is a generation-B JSONL line: header-derived phases with four
// times each and no KV timestamps (docs/trtllm.md#header-derived-phases).
func (t Timeline) DisaggB(off Offsets) string { return t.disaggBC(off, false, false) }

// DisaggC is a generation-C JSONL line (docs/trtllm.md#disaggregated-record); kv=false
// drops the KV timestamps as the writer does when they are falsy.
func (t Timeline) DisaggC(off Offsets, kv bool) string { return t.disaggBC(off, true, kv) }

func (t Timeline) disaggBC(off Offsets, full, kv bool) string {
	var o obj
	o.s("ctx_server", CtxServer)
	o.s("gen_server", GenServer)
	o.f("disagg_server_arrival_time", t.DisaggArrival)
	o.f("disagg_ctx_dispatch_time", t.Dispatch)
	o.f("disagg_server_first_token_time", t.DisaggFirst)
	o.s("status", "complete")
	o.kv("ctx_perf_metrics", phase(t.id(), t.ctxTiming(off.Ctx, full), ""))
	o.kv("gen_perf_metrics", phase(t.id(), t.genTiming(off.Gen, full, kv), ""))
	o.kv("disagg_request_id", t.id())
	return o.String()
}

// ProbeSpec describes one clock-sync probe in true time: the request
// leaves the reference at Originate, spends Out on the wire, Proc in the
// worker and Back on the way home. Offset is worker − true.
type ProbeSpec struct {
	Server                     string
	Originate, Out, Proc, Back float64
	Offset                     float64
	AsHeader                   bool // use the X-TRTLLM-Clock-Sync form
}

// Receive etc. are the four timestamps the probe records.
func (p ProbeSpec) Receive() float64     { return p.Originate + p.Out + p.Offset }
func (p ProbeSpec) Transmit() float64    { return p.Originate + p.Out + p.Proc + p.Offset }
func (p ProbeSpec) Destination() float64 { return p.Originate + p.Out + p.Proc + p.Back }

// ClockSyncJSON writes the ptdmon clock-sync input (docs/trtllm.md#clock-sync-input).
func ClockSyncJSON(probes ...ProbeSpec) []byte {
	var b bytes.Buffer
	b.WriteString(`{"reference_clock":"disagg 10.0.0.5:8000","probes":[`)
	for i, p := range probes {
		if i > 0 {
			b.WriteByte(',')
		}
		var o obj
		o.s("server", p.Server)
		o.f("originate_ts", p.Originate)
		o.f("destination_ts", p.Destination())
		if p.AsHeader {
			o.s("x_trtllm_clock_sync", fmt.Sprintf("receive;ts=%.9f, transmit;ts=%.9f", p.Receive(), p.Transmit()))
		} else {
			o.kv("response", `{"receive_ts":`+num(p.Receive())+`,"transmit_ts":`+num(p.Transmit())+`}`)
		}
		b.WriteString(o.String())
	}
	b.WriteString("]}")
	return b.Bytes()
}

// UsageJSON writes the usage input: id → OpenAI usage.
func UsageJSON(ts []Timeline) []byte {
	var o obj
	for _, t := range ts {
		o.kv(t.id(), fmt.Sprintf(`{"prompt_tokens":8192,"completion_tokens":%d}`, t.OutputTokens))
	}
	return []byte(o.String())
}
