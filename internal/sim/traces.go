package sim

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// Traces shaped as the engines': for every completed request of a vLLM
// group, the two llm_request spans its engines emit behind a P/D proxy (the
// prefill leg with max_tokens 1, the decode leg counting its wait for the
// remote KV as queue time), in one trace, plus a KV-transfer span, with the
// attributes of vllm/tracing; for every request of an SGLang group, each
// engine's root span with its thread span and stage slices, the roots in one
// export and the scheduler's spans in another, as SGLang's processes send
// them (docs/engines.md#traces). The true phases of each request are kept
// beside them, for tests.

// journeyRecord is one completed request's moments, in model time.
type journeyRecord struct {
	id                         uint64
	prof                       *Profile
	group, prefill, decode     string
	arrival, queued, pStart    int64
	pEnd, dSubmit, xferStart   int64
	dReady, dStart, first, end int64
	generated                  int
}

func journeyOf(r *request, d *engine, now int64) journeyRecord {
	return journeyRecord{
		id: r.id, prof: d.inst.grp.prof, group: d.inst.grp.spec.Name,
		prefill: r.p.inst.name, decode: d.inst.name,
		arrival: r.sent, queued: r.queued, pStart: r.pStart, pEnd: r.pEnd, dSubmit: r.dSubmit,
		xferStart: r.xferStart, dReady: r.dReady, dStart: r.dStart, first: r.firstTok, end: now,
		generated: r.generated,
	}
}

// JourneyTruth is one traced request's true phases in seconds, on the
// wall clock the spans carry.
type JourneyTruth struct {
	ID                string
	Prefill, Decode   string // instance names
	Arrival           time.Time
	Queue, PrefillDur float64
	KVTransfer        float64 // the transfer itself
	// DecodeQueue is the time on decode before scheduling that the
	// transfer does not cover.
	DecodeQueue float64
	// DecodeDur is from the decode engine's scheduling to the last token.
	DecodeDur float64
	Engine    string
}

// TraceSender posts the cluster's vLLM traces to an OTLP/HTTP endpoint.
type TraceSender struct {
	mu      sync.Mutex
	pending []journeyRecord
	truth   []JourneyTruth
	sent    int
}

// maxPendingJourneys bounds what waits for the next post, and the truth
// kept.
const maxPendingJourneys = 100_000

// SendTraces posts, every interval until ctx ends, the traces of the vLLM
// requests completed since the last post to url (an OTLP/HTTP traces
// endpoint, e.g. http://127.0.0.1:4318/v1/traces).
func (c *Cluster) SendTraces(ctx context.Context, url string, every time.Duration) *TraceSender {
	ts := &TraceSender{}
	c.mu.Lock()
	c.model.traced = func(j journeyRecord) {
		if j.prof.Traces == NoTraces {
			return
		}
		ts.mu.Lock()
		if len(ts.pending) < maxPendingJourneys {
			ts.pending = append(ts.pending, j)
		}
		ts.mu.Unlock()
	}
	c.mu.Unlock()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		tk := time.NewTicker(every)
		defer tk.Stop()
		client := &http.Client{Timeout: 10 * time.Second}
		for {
			select {
			case <-ctx.Done():
				return
			case <-c.done:
				return
			case <-tk.C:
			}
			c.mu.Lock()
			c.model.AdvanceTo(c.offset(c.opts.Clock()))
			c.mu.Unlock()
			ts.mu.Lock()
			batch := ts.pending
			ts.pending = nil
			ts.mu.Unlock()
			if len(batch) == 0 {
				continue
			}
			if err := c.postTraces(ctx, client, url, batch); err != nil {
				c.log.Warn("sim: posting traces failed", "url", url, "err", err)
				continue
			}
			ts.mu.Lock()
			for _, j := range batch {
				ts.truth = append(ts.truth, c.journeyTruth(j))
			}
			if over := len(ts.truth) - maxPendingJourneys; over > 0 {
				ts.truth = append(ts.truth[:0:0], ts.truth[over:]...)
			}
			ts.sent += len(batch)
			ts.mu.Unlock()
		}
	}()
	return ts
}

// Truth returns the true phases of the requests whose traces were posted.
func (ts *TraceSender) Truth() []JourneyTruth {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]JourneyTruth(nil), ts.truth...)
}

func (c *Cluster) at(t int64) time.Time { return c.wall(time.Duration(t)) }

func (c *Cluster) journeyTruth(j journeyRecord) JourneyTruth {
	s := func(a, b int64) float64 { return c.at(b).Sub(c.at(a)).Seconds() }
	ov := min(j.dStart, j.dReady) - max(j.dSubmit, j.xferStart)
	tr := JourneyTruth{
		ID: journeyID(j), Prefill: j.prefill, Decode: j.decode, Arrival: c.at(j.arrival),
		Queue: s(j.queued, j.pStart), PrefillDur: s(j.pStart, j.pEnd), KVTransfer: s(j.xferStart, j.dReady),
		DecodeQueue: s(j.dSubmit, j.dStart) - c.at(max(ov, 0)).Sub(c.at(0)).Seconds(),
		DecodeDur:   s(j.dStart, j.end), Engine: string(j.prof.Engine),
	}
	if j.prof.PreallocFirst {
		// The request is on decode from its arrival; the decode engine
		// queues it once its KV is in.
		tr.DecodeQueue = s(max(j.dSubmit, j.dReady), j.dStart)
	}
	return tr
}

func journeyID(j journeyRecord) string { return fmt.Sprintf("sim-%s-%d", j.group, j.id) }

// traces builds one export of the journeys' spans: one resource per
// instance, as each engine's exporter would send.
func (c *Cluster) traces(batch []journeyRecord) ptrace.Traces {
	td := ptrace.NewTraces()
	spans := map[string]ptrace.SpanSlice{}
	on := func(inst, group string) ptrace.SpanSlice {
		if ss, ok := spans[inst]; ok {
			return ss
		}
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", group)
		rs.Resource().Attributes().PutStr("service.instance.id", inst)
		sc := rs.ScopeSpans().AppendEmpty()
		sc.Scope().SetName("vllm")
		spans[inst] = sc.Spans()
		return spans[inst]
	}
	ts := func(t int64) pcommon.Timestamp { return pcommon.NewTimestampFromTime(c.at(t)) }
	sec := func(a, b int64) float64 { return c.at(b).Sub(c.at(a)).Seconds() }
	for _, j := range batch {
		if j.prof.Traces != LLMRequestSpans {
			continue
		}
		trace, proxy := journeyIDs(j)
		leg := func(inst string, kind byte, start, end int64, attrs map[string]any) {
			s := on(inst, j.group).AppendEmpty()
			s.SetTraceID(trace)
			span := proxy
			span[7] ^= kind
			s.SetSpanID(span)
			s.SetParentSpanID(proxy)
			s.SetKind(ptrace.SpanKindServer)
			s.SetStartTimestamp(ts(start))
			s.SetEndTimestamp(ts(end))
			if attrs == nil {
				s.SetName("vllm_async_kv_transfer")
				s.SetKind(ptrace.SpanKindInternal)
				return
			}
			s.SetName("llm_request")
			attrs["gen_ai.request.id"] = journeyID(j)
			_ = s.Attributes().FromRaw(attrs) // plain strings, ints and floats: always accepted
		}
		leg(j.prefill, 0x40, j.arrival, j.pEnd, map[string]any{
			"gen_ai.request.max_tokens": 1, "gen_ai.usage.prompt_tokens": c.model.sc.InputTokens, "gen_ai.usage.completion_tokens": 1,
			"gen_ai.latency.time_in_queue": sec(j.queued, j.pStart), "gen_ai.latency.time_to_first_token": sec(j.arrival, j.pEnd),
			"gen_ai.latency.time_in_model_prefill": sec(j.pStart, j.pEnd), "gen_ai.latency.time_in_model_decode": 0.0,
			"gen_ai.latency.e2e": sec(j.arrival, j.pEnd),
		})
		leg(j.decode, 0x80, j.dSubmit, j.end, map[string]any{
			"gen_ai.request.max_tokens": c.model.sc.OutputTokens, "gen_ai.usage.prompt_tokens": c.model.sc.InputTokens,
			"gen_ai.usage.completion_tokens": j.generated,
			"gen_ai.latency.time_in_queue":   sec(j.dSubmit, j.dStart), "gen_ai.latency.time_to_first_token": sec(j.dSubmit, j.first),
			"gen_ai.latency.time_in_model_prefill": sec(j.dStart, j.first), "gen_ai.latency.time_in_model_decode": sec(j.first, j.end),
			"gen_ai.latency.e2e": sec(j.dSubmit, j.end),
		})
		leg(j.decode, 0xc0, j.xferStart, j.dReady, nil)
	}
	return td
}

// journeyIDs are the trace id of a journey and the span id of the P/D
// proxy's span, the parent of both legs.
func journeyIDs(j journeyRecord) (trace [16]byte, proxy [8]byte) {
	for i := range 8 {
		trace[8+i] = byte(j.id >> (8 * i))
		proxy[i] = byte(j.id >> (8 * i))
	}
	copy(trace[:], "ptdmsim!")
	return trace, proxy
}

// postTraces posts the batch's traces: the vLLM spans and SGLang's
// scheduler spans first, then SGLang's root spans, which its API server
// exports when the request finishes.
func (c *Cluster) postTraces(ctx context.Context, client *http.Client, url string, batch []journeyRecord) error {
	sched, roots := c.sglangTraces(batch)
	for _, td := range []ptrace.Traces{c.traces(batch), sched, roots} {
		if td.SpanCount() == 0 {
			continue
		}
		if err := post(ctx, client, url, td); err != nil {
			return err
		}
	}
	return nil
}

// sglangTraces builds the spans SGLang's engines export for the batch's
// SGLang requests (python/sglang/srt/observability/trace.py and
// req_time_stats.py, docs/engines.md#traces): per engine a root span
// "<role> Req <rid…>" under the router's span, a scheduler thread span
// under it, and the stage slices under that. The roots come from the API
// server process, the rest from the scheduler process: two exports.
func (c *Cluster) sglangTraces(batch []journeyRecord) (sched, roots ptrace.Traces) {
	sched, roots = ptrace.NewTraces(), ptrace.NewTraces()
	type key struct {
		td   ptrace.Traces
		inst string
	}
	spans := map[key]ptrace.SpanSlice{}
	on := func(td ptrace.Traces, inst, group string) ptrace.SpanSlice {
		k := key{td, inst}
		if ss, ok := spans[k]; ok {
			return ss
		}
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", group)
		rs.Resource().Attributes().PutStr("service.instance.id", inst)
		sc := rs.ScopeSpans().AppendEmpty()
		sc.Scope().SetName("sglang server")
		spans[k] = sc.Spans()
		return spans[k]
	}
	ts := func(t int64) pcommon.Timestamp { return pcommon.NewTimestampFromTime(c.at(t)) }
	for _, j := range batch {
		if j.prof.Traces != StageSliceSpans {
			continue
		}
		trace, proxy := journeyIDs(j)
		rid := journeyID(j)
		span := func(td ptrace.Traces, inst string, id, parent byte, name string, start, end int64) ptrace.Span {
			s := on(td, inst, j.group).AppendEmpty()
			s.SetTraceID(trace)
			sid, pid := proxy, proxy
			sid[7] ^= id
			if parent != 0 {
				pid[7] ^= parent
			}
			s.SetSpanID(sid)
			s.SetParentSpanID(pid)
			s.SetName(name)
			s.SetStartTimestamp(ts(start))
			s.SetEndTimestamp(ts(end))
			return s
		}
		leg := func(inst, role string, base byte, start, end int64, slices [][3]any) {
			root := span(roots, inst, base, 0, role+" Req "+rid[:min(8, len(rid))], start, end)
			root.Attributes().PutStr("rid", rid)
			root.Attributes().PutStr("module", "sglang::request")
			root.Attributes().PutStr("bootstrap_room", fmt.Sprintf("%#x", j.id))
			th := span(sched, inst, base+1, base, "Scheduler [TP 0] (host:ptdmsim0 | pid:1)", start, end)
			th.Attributes().PutInt("tp_rank", 0)
			th.Attributes().PutStr("host_id", "ptdmsim0")
			th.Attributes().PutInt("pid", 1)
			th.Attributes().PutStr("thread_label", "Scheduler")
			for i, sl := range slices {
				span(sched, inst, base+2+byte(i), base+1, sl[0].(string), sl[1].(int64), sl[2].(int64))
			}
		}
		leg(j.prefill, "prefill", 0x10, j.arrival, max(j.pEnd, j.dReady), [][3]any{
			{"prefill_waiting", j.queued, j.pStart},
			{"prefill_forward", j.pStart, j.pEnd},
			{"prefill_transfer_kv_cache", j.xferStart, j.dReady},
		})
		kvIn := max(j.dSubmit, j.dReady)
		leg(j.decode, "decode", 0x20, j.dSubmit, j.end, [][3]any{
			{"decode_transferred", j.dSubmit, kvIn},
			{"decode_waiting", kvIn, j.dStart},
			{"decode_forward", j.dStart, j.end},
		})
	}
	return sched, roots
}

func post(ctx context.Context, client *http.Client, url string, td ptrace.Traces) error {
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		return fmt.Errorf("encode traces: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("traces request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("post traces: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("post traces: %s", resp.Status)
	}
	return nil
}
