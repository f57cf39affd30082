package journey

import (
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Span and attribute names read from SGLang's request tracing
// (--enable-trace). Each engine opens a root span per request in its API
// server, named "<role> Req <first 8 characters of rid>" with the
// attributes rid, module and bootstrap_room
// (python/sglang/srt/observability/trace.py, TraceReqContext); each
// process adds a thread span (attribute thread_label) under it, and the
// scheduler's stage slices are spans under its thread span, named after
// RequestStage (python/sglang/srt/observability/req_time_stats.py).
// docs/engines.md#traces pins both files to a commit.
const (
	sglangAttrRID           = "rid"
	sglangAttrModule        = "module"
	sglangModuleRequest     = "sglang::request"
	sglangAttrBootstrapRoom = "bootstrap_room"
	sglangAttrThreadLabel   = "thread_label"

	// Stage slices: wait queue entry to forward entry, forward entry to
	// the end of prefill, and the prefill engine's transfer queue entry to
	// the KV transfer's end.
	sglangPrefillWaiting  = "prefill_waiting"
	sglangPrefillForward  = "prefill_forward"
	sglangPrefillTransfer = "prefill_transfer_kv_cache"
	// On the decode engine: wait queue entry (after the KV arrived) to
	// forward entry, and forward entry to completion.
	sglangDecodeWaiting = "decode_waiting"
	sglangDecodeForward = "decode_forward"
)

// Roles of a leg, from SGLang's root span name; vLLM's legs have none.
const (
	rolePrefill = "prefill"
	roleDecode  = "decode"
	roleUnified = "unified"
)

// SGLangSpan is one of the SGLang spans a leg is assembled from: a root,
// a thread span or a stage slice.
type SGLangSpan struct {
	TraceID, SpanID, Parent string
	Pool, Instance          string
	Name                    string
	Start, End              time.Time
	// Root spans only: the role and the request id.
	Root            bool
	Role, RID, Room string
}

// sglangSpan reads s when it is an SGLang span a leg needs.
func sglangSpan(s ptrace.Span, pool, inst string) (SGLangSpan, bool) {
	a := s.Attributes()
	sp := SGLangSpan{
		TraceID: traceID(s.TraceID()), Pool: pool, Instance: inst, Name: s.Name(),
		Start: s.StartTimestamp().AsTime(), End: s.EndTimestamp().AsTime(),
	}
	if !s.SpanID().IsEmpty() {
		sp.SpanID = s.SpanID().String()
	}
	if !s.ParentSpanID().IsEmpty() {
		sp.Parent = s.ParentSpanID().String()
	}
	switch {
	case str(a, sglangAttrModule) == sglangModuleRequest:
		// The name is "<role> Req <rid…>", the role empty when not
		// disaggregated.
		role, _, ok := strings.Cut(s.Name(), "Req ")
		if !ok {
			return sp, false
		}
		sp.Root, sp.RID, sp.Room = true, str(a, sglangAttrRID), str(a, sglangAttrBootstrapRoom)
		sp.Role = strings.TrimSpace(role)
		if sp.Role == "" {
			sp.Role = roleUnified
		}
	case str(a, sglangAttrThreadLabel) != "":
	case sglangSlice(s.Name()):
	default:
		return sp, false
	}
	return sp, sp.SpanID != "" && sp.TraceID != ""
}

func sglangSlice(name string) bool {
	switch name {
	case sglangPrefillWaiting, sglangPrefillForward, sglangPrefillTransfer, sglangDecodeWaiting, sglangDecodeForward:
		return true
	}
	return false
}

// sglangLeg builds the leg of root from the slices under it (by name),
// and says whether the slices it needs are in.
func sglangLeg(root SGLangSpan, slices map[string]SGLangSpan) (Leg, bool) {
	lg := Leg{
		TraceID: root.TraceID, RequestID: root.RID, Pool: root.Pool, Instance: root.Instance,
		Role: root.Role, Room: root.Room, Start: root.Start, End: root.End,
		Queue: -1, TTFT: -1, E2E: -1, Prefill: -1, Decode: -1,
		MaxTokens: -1, PromptTokens: -1, CompletionTokens: -1,
	}
	at := &LegTimes{}
	need := func(names ...string) bool {
		for _, n := range names {
			if _, ok := slices[n]; !ok {
				return false
			}
		}
		return true
	}
	switch root.Role {
	case rolePrefill:
		if !need(sglangPrefillWaiting, sglangPrefillForward) {
			return lg, false
		}
		at.Queued, at.Scheduled = slices[sglangPrefillWaiting].Start, slices[sglangPrefillForward].Start
		at.First = slices[sglangPrefillForward].End
		// The leg's part in the request ends with its compute: the KV
		// transfer after it is a phase of its own.
		lg.End = at.First
	case roleDecode:
		if !need(sglangDecodeWaiting, sglangDecodeForward) {
			return lg, false
		}
		at.Queued, at.Scheduled = slices[sglangDecodeWaiting].Start, slices[sglangDecodeForward].Start
		at.Last = slices[sglangDecodeForward].End
	default:
		if !need(sglangPrefillWaiting, sglangPrefillForward, sglangDecodeForward) {
			return lg, false
		}
		at.Queued, at.Scheduled = slices[sglangPrefillWaiting].Start, slices[sglangPrefillForward].Start
		at.First, at.Last = slices[sglangPrefillForward].End, slices[sglangDecodeForward].End
	}
	lg.At = at
	return lg, true
}
