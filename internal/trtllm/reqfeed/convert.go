package reqfeed

import (
	"math"
	"time"

	"github.com/ptdmon/ptdmon/internal/journey"
	"github.com/ptdmon/ptdmon/internal/trtllm/reqtrace"
)

// phaseOf maps reqtrace's spans to journey's phases. Queue, prefill and
// the KV transfer mean the same in both; decode is measured from the
// disaggregated server's first token to the generation worker's last
// (docs/requests.md#the-phases).
var phaseOf = []struct {
	span  reqtrace.Span
	phase journey.Phase
	side  string
}{
	{reqtrace.Queue, journey.PhaseQueue, journey.SidePrefill},
	{reqtrace.Prefill, journey.PhasePrefill, journey.SidePrefill},
	{reqtrace.KVTransfer, journey.PhaseKVTransfer, journey.SideDecode},
	{reqtrace.Decode, journey.PhaseDecode, journey.SideDecode},
}

// Reasons of phases a record cannot give.
const (
	reasonNoDecodeQueue = "not separated in TensorRT-LLM's perf-metrics records"
	reasonUnplaced      = "the record's clocks disagree, its phases cannot be placed"
)

// Record is the journey record of one computed TensorRT-LLM request. wall
// puts a time of the record's reference clock (the disaggregated server's
// steady clock, or the worker's for a worker record) on the wall clock.
// instance names the polled server, the only instance a worker record has.
func Record(q *reqtrace.Request, r *reqtrace.Record, pool, instance string, wall func(float64) time.Time) journey.Record {
	out := journey.Record{ID: string(q.ID), Pool: pool, Absent: map[journey.Phase]string{},
		TTFT: value(q.Spans[reqtrace.TTFT]), E2E: value(q.Spans[reqtrace.E2E]),
		PromptTokens: -1, CompletionTokens: q.OutputTokens}
	arrival := r.DisaggArrival
	switch {
	case r.Kind == reqtrace.KindWorker:
		arrival = r.Worker.Timing.Arrival
		out.Legs, out.DecodeInstance = "decode", instance
	case r.Ctx.Present && r.GenPhase.Present:
		out.Legs = "prefill+decode"
	case r.Ctx.Present:
		out.Legs = "prefill"
	default:
		out.Legs = "decode"
	}
	if r.Kind == reqtrace.KindDisagg {
		out.PrefillInstance, out.DecodeInstance = q.CtxServer, q.GenServer
	}
	if arrival > 0 {
		out.Arrival = wall(arrival)
	}
	placed := map[reqtrace.Span]reqtrace.Segment{}
	for _, s := range q.Segments {
		placed[s.Span] = s
	}
	for _, m := range phaseOf {
		v := q.Spans[m.span]
		seg, ok := placed[m.span]
		switch {
		case !v.OK:
			out.Absent[m.phase] = v.Reason
		case !ok:
			out.Absent[m.phase] = reasonUnplaced
		default:
			out.Waterfall = append(out.Waterfall, journey.Interval{Phase: m.phase, Start: seg.Start, End: seg.End, Side: m.side})
		}
	}
	out.Absent[journey.PhaseDecodeQueue] = reasonNoDecodeQueue
	return out
}

func value(v reqtrace.Value) float64 {
	if !v.OK || math.IsNaN(v.Seconds) {
		return -1
	}
	return v.Seconds
}
