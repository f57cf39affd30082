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
	SGLangAttrRID           = "rid"
	SGLangAttrModule        = "module"
	SGLangModuleRequest     = "sglang::request"
	SGLangAttrBootstrapRoom = "bootstrap_room"
	SGLangAttrThreadLabel   = "thread_label"

	// Stage slices: wait queue entry to forward entry, forward entry to
	// the end of prefill, and the prefill engine's transfer queue entry to
	// the KV transfer's end.
	SGLangPrefillWaiting  = "prefill_waiting"
	SGLangPrefillForward  = "prefill_forward"
	SGLangPrefillTransfer = "prefill_transfer_kv_cache"
	// On the decode engine: wait queue entry (after the KV arrived) to
	// forward entry, and forward entry to completion.
	SGLangDecodeWaiting = "decode_waiting"
	SGLangDecodeForward = "decode_forward"
)

// Roles of a leg, from SGLang's root span name; vLLM's legs have none.
const (
	RolePrefill = "prefill"
	RoleDecode  = "decode"
	RoleUnified = "unified"
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
	case str(a, SGLangAttrModule) == SGLangModuleRequest:
		// The name is "<role> Req <rid…>", the role empty when not
		// disaggregated.
		role, _, ok := strings.Cut(s.Name(), "Req ")
		if !ok {
			return sp, false
		}
		sp.Root, sp.RID, sp.Room = true, str(a, SGLangAttrRID), str(a, SGLangAttrBootstrapRoom)
		sp.Role = strings.TrimSpace(role)
		if sp.Role == "" {
			sp.Role = RoleUnified
		}
	case str(a, SGLangAttrThreadLabel) != "":
	case sglangSlice(s.Name()):
	default:
		return sp, false
	}
	return sp, sp.SpanID != "" && sp.TraceID != ""
}

func sglangSlice(name string) bool {
	switch name {
	case SGLangPrefillWaiting, SGLangPrefillForward, SGLangPrefillTransfer, SGLangDecodeWaiting, SGLangDecodeForward:
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
	case RolePrefill:
		if !need(SGLangPrefillWaiting, SGLangPrefillForward) {
			return lg, false
		}
		at.Queued, at.Scheduled = slices[SGLangPrefillWaiting].Start, slices[SGLangPrefillForward].Start
		at.First = slices[SGLangPrefillForward].End
		// The leg's part in the request ends with its compute: the KV
		// transfer after it is a phase of its own.
		lg.End = at.First
	case RoleDecode:
		if !need(SGLangDecodeWaiting, SGLangDecodeForward) {
			return lg, false
		}
		at.Queued, at.Scheduled = slices[SGLangDecodeWaiting].Start, slices[SGLangDecodeForward].Start
		at.Last = slices[SGLangDecodeForward].End
	default:
		if !need(SGLangPrefillWaiting, SGLangPrefillForward, SGLangDecodeForward) {
			return lg, false
		}
		at.Queued, at.Scheduled = slices[SGLangPrefillWaiting].Start, slices[SGLangPrefillForward].Start
		at.First, at.Last = slices[SGLangPrefillForward].End, slices[SGLangDecodeForward].End
	}
	lg.At = at
	return lg, true
}
