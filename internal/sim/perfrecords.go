package sim

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"time"
)

// Per-request perf-metrics records of TensorRT-LLM groups (docs/trtllm.md#disaggregated-record):
// one generation-C disaggregated JSONL line per completed request, as the
// disagg server writes them, with the ctx and gen phases on their workers'
// own steady clocks (no clock-sync header applied), so that `ptdmon
// requests -clock-sync` has something to align.

// trtSteadyBase is the disagg server's steady clock (seconds) at simulated
// time 0; a worker's steady clock reads the disagg clock plus its offset.
const trtSteadyBase = 73500.0

// trtEps is the fixed HTTP/frontend overhead placed around the modelled
// instants so that the causal chain of docs/trtllm.md#causal-chain holds strictly.
const trtEps = int64(250 * time.Microsecond)

// trtRecord is the true timeline of one completed TensorRT-LLM request, in
// model time (nanoseconds since the epoch).
type trtRecord struct {
	id                              uint64
	ctx, gen                        *instance
	arrival, pStart, pEnd           int64
	xferStart, kvEnd, dStart, first int64
	done, step                      int64
	tokens                          int
}

func trtRecordOf(r *request, d *engine, now int64) trtRecord {
	return trtRecord{
		id: trtDisaggID(r), ctx: r.p.inst, gen: d.inst,
		arrival: r.sent, pStart: r.pStart, pEnd: r.pEnd,
		xferStart: r.xferStart, kvEnd: r.dReady, dStart: r.dStart, first: r.firstTok,
		done: now, step: int64(d.inst.grp.spec.Decode.Step(len(d.running))), tokens: r.generated,
	}
}

// trtDisaggID builds a snowflake like get_global_disagg_request_id:
// timestamp_ms(39) | node_id(8) | process_id(6) | counter(10), the
// timestamp being the disagg host's monotonic milliseconds (12 days of
// uptime at time 0), so every id is above 2^53 and a float64 decoder
// corrupts it.
func trtDisaggID(r *request) uint64 {
	const uptimeMs = 12 * 24 * 3600 * 1000
	ms := uint64(uptimeMs + r.arrival/int64(time.Millisecond))
	return ms<<24 | 0x2a<<16 | 0x15<<10 | (r.id & 1023)
}

// TRTLLMRecord is the true timeline of one completed TensorRT-LLM request on
// the disagg server's clock (seconds), as WritePerfRecords writes it before
// the per-worker clock offsets are added.
type TRTLLMRecord struct {
	ID                     uint64
	Ctx, Gen               string // instance names
	DisaggArrival          float64
	Dispatch               float64
	CtxSrvArrival          float64
	CtxArrival             float64
	CtxSched               float64
	CtxFirst               float64 // = ctx last token
	CtxSrvFirst            float64
	GenSrvArrival          float64
	GenArrival             float64
	KVStart, KVEnd         float64
	GenSched               float64
	GenFirst               float64
	GenSrvFirst            float64
	DisaggFirst            float64
	GenLast                float64
	OutputTokens           int
	E2E, TTFT, Queue, KVMs float64 // seconds (KVMs in ms)
}

func (r *trtRecord) timeline() TRTLLMRecord {
	sec := func(t int64) float64 { return trtSteadyBase + float64(t)/1e9 }
	delta := min(trtEps, (r.pEnd-r.pStart)/8)
	gamma := min(trtEps, r.step/4)
	x := TRTLLMRecord{
		ID: r.id, Ctx: r.ctx.name, Gen: r.gen.name,
		DisaggArrival: sec(r.arrival - 4*trtEps),
		Dispatch:      sec(r.arrival - 3*trtEps),
		CtxSrvArrival: sec(r.arrival - 2*trtEps),
		CtxArrival:    sec(r.arrival),
		CtxSched:      sec(r.pStart),
		CtxFirst:      sec(r.pEnd - 4*delta),
		CtxSrvFirst:   sec(r.pEnd - 3*delta),
		GenSrvArrival: sec(r.pEnd - 2*delta),
		GenArrival:    sec(r.pEnd - delta),
		KVStart:       sec(r.xferStart),
		KVEnd:         sec(r.kvEnd),
		GenSched:      sec(r.dStart + gamma),
		GenFirst:      sec(r.first),
		GenSrvFirst:   sec(r.first + gamma),
		DisaggFirst:   sec(r.first + 2*gamma),
		GenLast:       sec(r.done),
		OutputTokens:  r.tokens,
	}
	x.E2E = float64(r.done-r.arrival+4*trtEps) / 1e9
	x.TTFT = float64(r.first+2*gamma-r.arrival+4*trtEps) / 1e9
	x.Queue = float64(r.pStart-r.arrival) / 1e9
	x.KVMs = float64(r.kvEnd-r.xferStart) / 1e6
	return x
}

// TRTLLMRecords returns the true timelines of the TensorRT-LLM requests
// completed so far, in completion order (the order WritePerfRecords writes).
func (c *Cluster) TRTLLMRecords() []TRTLLMRecord {
	recs := c.trtSnapshot()
	out := make([]TRTLLMRecord, len(recs))
	for i := range recs {
		out[i] = recs[i].timeline()
	}
	return out
}

func (c *Cluster) trtSnapshot() []trtRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.model.AdvanceTo(c.offset(c.opts.Clock()))
	return c.model.trtDone[:len(c.model.trtDone):len(c.model.trtDone)]
}

func (c *Cluster) steadyOffset(name string) float64 {
	return c.opts.SteadyClockOffsets[name].Seconds()
}

func (c *Cluster) serverOf(name string) string {
	for _, li := range c.insts {
		if li.info.Name == name {
			return li.addr
		}
	}
	return ""
}

// appendJSONFloat prints like Python's json.dumps (repr): shortest digits,
// always a fractional part or an exponent.
func appendJSONFloat(dst []byte, v float64) []byte {
	n := len(dst)
	dst = strconv.AppendFloat(dst, v, 'f', -1, 64)
	for _, ch := range dst[n:] {
		if ch == '.' {
			return dst
		}
	}
	return append(dst, '.', '0')
}

type jsonObj struct {
	b     []byte
	first bool
}

func (o *jsonObj) key(k string) {
	if !o.first {
		o.b = append(o.b, ',')
	}
	o.first = false
	o.b = strconv.AppendQuote(o.b, k)
	o.b = append(o.b, ':')
}
func (o *jsonObj) f(k string, v float64) { o.key(k); o.b = appendJSONFloat(o.b, v) }
func (o *jsonObj) s(k, v string)         { o.key(k); o.b = strconv.AppendQuote(o.b, v) }
func (o *jsonObj) u(k string, v uint64)  { o.key(k); o.b = strconv.AppendUint(o.b, v, 10) }
func (o *jsonObj) open(k string) {
	o.key(k)
	o.b = append(o.b, '{')
	o.first = true
}
func (o *jsonObj) close() { o.b = append(o.b, '}'); o.first = false }

// WritePerfRecords writes one generation-C disaggregated perf-metrics JSONL
// line (docs/trtllm.md#disaggregated-record) per TensorRT-LLM request completed so far, in
// completion order. disagg_* times are on the disagg server's steady clock;
// ctx and gen times are on the workers' steady clocks, which read the disagg
// clock plus Options.SteadyClockOffsets[instance]. ctx_server/gen_server are
// the instances' host:port, as in the clock-sync probes of WriteClockSync.
func (c *Cluster) WritePerfRecords(w io.Writer) error {
	recs := c.trtSnapshot()
	servers := map[string]string{}
	for _, li := range c.insts {
		servers[li.info.Name] = li.addr
	}
	bw := bufio.NewWriter(w)
	var o jsonObj
	for i := range recs {
		x := recs[i].timeline()
		oc, og := c.steadyOffset(x.Ctx), c.steadyOffset(x.Gen)
		o.b, o.first = append(o.b[:0], '{'), true
		o.s("ctx_server", servers[x.Ctx])
		o.s("gen_server", servers[x.Gen])
		o.f("disagg_server_arrival_time", x.DisaggArrival)
		o.f("disagg_ctx_dispatch_time", x.Dispatch)
		o.f("disagg_server_first_token_time", x.DisaggFirst)
		o.s("status", "complete")
		o.open("ctx_perf_metrics")
		o.u("request_id", x.ID)
		o.open("perf_metrics")
		o.open("timing_metrics")
		o.f("arrival_time", x.CtxArrival+oc)
		o.f("last_token_time", x.CtxFirst+oc)
		o.f("server_arrival_time", x.CtxSrvArrival+oc)
		o.f("server_first_token_time", x.CtxSrvFirst+oc)
		o.f("first_scheduled_time", x.CtxSched+oc)
		o.f("first_token_time", x.CtxFirst+oc)
		o.close()
		o.close()
		o.close()
		o.open("gen_perf_metrics")
		o.u("request_id", x.ID)
		o.open("perf_metrics")
		o.open("timing_metrics")
		o.f("arrival_time", x.GenArrival+og)
		o.f("last_token_time", x.GenLast+og)
		o.f("server_arrival_time", x.GenSrvArrival+og)
		o.f("server_first_token_time", x.GenSrvFirst+og)
		o.f("kv_cache_transfer_start", x.KVStart+og)
		o.f("kv_cache_transfer_end", x.KVEnd+og)
		o.f("first_scheduled_time", x.GenSched+og)
		o.f("first_token_time", x.GenFirst+og)
		o.close()
		o.close()
		o.close()
		o.u("disagg_request_id", x.ID)
		o.b = append(o.b, '}', '\n')
		if _, err := bw.Write(o.b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WriteClockSync writes ptdmon's clock-sync input (docs/trtllm.md#clock-sync-input) for every
// TensorRT-LLM worker: three probes per worker taken just before the
// current instant, on the disagg server's clock (originate/destination) and
// the worker's (receive/transmit, 0.2 s apart as GET /steady_clock_offset
// sleeps), with asymmetric network legs. The least-delay probe estimates
// the configured offset within 25 µs; the last probe is in the
// X-TRTLLM-Clock-Sync header form.
func (c *Cluster) WriteClockSync(w io.Writer) error {
	c.mu.Lock()
	c.model.AdvanceTo(c.offset(c.opts.Clock()))
	now := trtSteadyBase + c.model.Now().Seconds()
	c.mu.Unlock()
	legs := [...][2]float64{{0.0008, 0.0005}, {0.0003, 0.00035}, {0.002, 0.0009}}
	const proc = 0.2
	o := jsonObj{b: []byte(`{"reference_clock":"disagg server steady clock (simulated)","probes":[`)}
	n := 0
	for _, in := range c.model.instances {
		if in.trt == nil {
			continue
		}
		theta := c.steadyOffset(in.name)
		for k, l := range legs {
			if n > 0 {
				o.b = append(o.b, ',')
			}
			n++
			orig := now - 3 + float64(k)
			recv := orig + l[0] + theta
			xmit := recv + proc
			dest := orig + l[0] + proc + l[1]
			o.b, o.first = append(o.b, '{'), true
			o.s("server", c.serverOf(in.name))
			o.f("originate_ts", orig)
			o.f("destination_ts", dest)
			if k == len(legs)-1 {
				o.s("x_trtllm_clock_sync", fmt.Sprintf("receive;ts=%.9f, transmit;ts=%.9f", recv, xmit))
			} else {
				o.open("response")
				o.f("receive_ts", recv)
				o.f("transmit_ts", xmit)
				o.close()
			}
			o.b = append(o.b, '}')
		}
	}
	o.b = append(o.b, "]}\n"...)
	_, err := w.Write(o.b)
	return err
}

// WriteUsage writes the token usage of the TensorRT-LLM requests completed
// so far in ptdmon's usage input shape (docs/trtllm.md#output-tokens): disagg request id →
// {"prompt_tokens", "completion_tokens"}, so `ptdmon requests -usage` can
// compute TPOT.
func (c *Cluster) WriteUsage(w io.Writer) error {
	recs := c.trtSnapshot()
	prompt := c.model.sc.InputTokens
	o := jsonObj{b: []byte{'{'}, first: true}
	for i := range recs {
		o.open(strconv.FormatUint(recs[i].id, 10))
		o.u("prompt_tokens", uint64(prompt))
		o.u("completion_tokens", uint64(recs[i].tokens))
		o.close()
	}
	o.b = append(o.b, "}\n"...)
	_, err := w.Write(o.b)
	return err
}
