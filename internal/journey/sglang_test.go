package journey

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// sgSpan is one span of an SGLang export in a test: times in seconds after
// t0, ids as one byte each.
type sgSpan struct {
	inst         string
	id, parent   byte
	name         string
	start, end   float64
	root, thread bool
	rid, room    string
}

// sgExport builds one OTLP export of spans, all of trace tr.
func sgExport(tr byte, spans ...sgSpan) ptrace.Traces {
	td := ptrace.NewTraces()
	for _, sp := range spans {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr(resServiceName, "qwen")
		rs.Resource().Attributes().PutStr(resServiceInstance, sp.inst)
		s := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		s.SetTraceID(pcommon.TraceID{15: tr})
		s.SetSpanID(pcommon.SpanID{7: sp.id})
		if sp.parent != 0 {
			s.SetParentSpanID(pcommon.SpanID{7: sp.parent})
		}
		s.SetName(sp.name)
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(at(sp.start)))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(at(sp.end)))
		switch {
		case sp.root:
			s.Attributes().PutStr(sglangAttrRID, sp.rid)
			s.Attributes().PutStr(sglangAttrModule, sglangModuleRequest)
			room := sp.room
			if room == "" {
				room = "0x2a"
			}
			s.Attributes().PutStr(sglangAttrBootstrapRoom, room)
		case sp.thread:
			s.Attributes().PutStr(sglangAttrThreadLabel, "Scheduler")
		}
	}
	return td
}

// One disaggregated request as SGLang's two engines trace it. Prefill:
// arrival 0, queue 0.1–0.3, forward 0.3–0.7, KV transfer 0.72–0.9, root
// ends 0.95. Decode: arrival 0.05, KV in at 0.9, queue 0.9–1.2, forward
// 1.2–3.2.
var (
	sgPrefillRoot = sgSpan{inst: "p0", id: 1, parent: 99, name: "prefill Req cmpl-7ab", start: 0, end: 0.95, root: true, rid: "cmpl-7ab"}
	sgPrefillRest = []sgSpan{
		{inst: "p0", id: 2, parent: 1, name: "Scheduler [TP 0] (host:abcd | pid:7)", start: 0.01, end: 0.95, thread: true},
		{inst: "p0", id: 3, parent: 2, name: sglangPrefillWaiting, start: 0.1, end: 0.3},
		{inst: "p0", id: 4, parent: 2, name: sglangPrefillForward, start: 0.3, end: 0.7},
		{inst: "p0", id: 5, parent: 2, name: sglangPrefillTransfer, start: 0.72, end: 0.9},
		{inst: "p0", id: 6, parent: 2, name: "prefill_bootstrap", start: 0.02, end: 0.1},
	}
	sgDecodeRoot = sgSpan{inst: "d0", id: 11, parent: 99, name: "decode Req cmpl-7ab", start: 0.05, end: 3.3, root: true, rid: "cmpl-7ab"}
	sgDecodeRest = []sgSpan{
		{inst: "d0", id: 12, parent: 11, name: "Scheduler [TP 0] (host:ef01 | pid:9)", start: 0.06, end: 3.2, thread: true},
		{inst: "d0", id: 13, parent: 12, name: "decode_transferred", start: 0.2, end: 0.9},
		{inst: "d0", id: 14, parent: 12, name: sglangDecodeWaiting, start: 0.9, end: 1.2},
		{inst: "d0", id: 15, parent: 12, name: sglangDecodeForward, start: 1.2, end: 3.2},
		{inst: "d0", id: 16, parent: 15, name: "decode_loop", start: 1.2, end: 1.22},
	}
)

// TestSGLangJoin: SGLang's roots and slices, sent in separate exports in
// any order, give one record whose phases are the slices' durations.
func TestSGLangJoin(t *testing.T) {
	want := map[Phase]float64{PhaseQueue: 0.2, PhasePrefill: 0.4, PhaseKVTransfer: 0.18, PhaseDecodeQueue: 0.3, PhaseDecode: 2.0}
	f := func(name string, exports ...ptrace.Traces) {
		t.Run(name, func(t *testing.T) {
			l := NewBook(0)
			for _, td := range exports {
				l.Add(Extract(td))
			}
			recs := l.Records()
			if len(recs) != 1 {
				t.Fatalf("%d records, want 1: %+v", len(recs), recs)
			}
			r := recs[0]
			if !r.Complete() || r.ID != "cmpl-7ab" || r.PrefillInstance != "p0" || r.DecodeInstance != "d0" || r.Pool != "qwen" {
				t.Fatalf("record %+v", r)
			}
			for ph, w := range want {
				if v, ok := r.Phase(ph); !ok || !near(v, w) {
					t.Errorf("%s = %v (known %v), want %v; absent: %q", ph, v, ok, w, r.Absent[ph])
				}
			}
			for _, iv := range r.Waterfall {
				if iv.Inferred {
					t.Errorf("%s inferred; every phase is a slice", iv.Phase)
				}
			}
			if !r.Arrival.Equal(at(0)) || !near(r.E2E, 3.3) {
				t.Errorf("arrival %v e2e %v", r.Arrival, r.E2E)
			}
			if r.TTFT != -1 {
				t.Errorf("ttft %v: no slice marks the first token the client got", r.TTFT)
			}
		})
	}
	roots := sgExport(1, sgPrefillRoot, sgDecodeRoot)
	rest := sgExport(1, append(append([]sgSpan{}, sgPrefillRest...), sgDecodeRest...)...)
	f("one export", sgExport(1, append(append([]sgSpan{sgPrefillRoot, sgDecodeRoot}, sgPrefillRest...), sgDecodeRest...)...))
	f("slices first", rest, roots)
	f("roots first", roots, rest)
	f("per engine and process",
		sgExport(1, sgDecodeRest...), sgExport(1, sgDecodeRoot), sgExport(1, sgPrefillRoot), sgExport(1, sgPrefillRest...))
}

// TestSGLangPartial: what has not arrived is absent with its reason, never
// a zero; a decode leg alone has no prefill of its own.
func TestSGLangPartial(t *testing.T) {
	l := NewBook(0)
	l.Add(Extract(sgExport(2, append([]sgSpan{sgDecodeRoot}, sgDecodeRest...)...)))
	recs := l.Records()
	if len(recs) != 1 || recs[0].Legs != "decode" {
		t.Fatalf("records %+v, want one decode leg", recs)
	}
	r := recs[0]
	if v, ok := r.Phase(PhaseDecode); !ok || !near(v, 2.0) {
		t.Errorf("decode %v (%v), want 2", v, ok)
	}
	for _, ph := range []Phase{PhasePrefill, PhaseKVTransfer, PhaseDecodeQueue} {
		if _, ok := r.Phase(ph); ok || r.Absent[ph] != reasonNoPrefill {
			t.Errorf("%s known %v, absent %q", ph, ok, r.Absent[ph])
		}
	}

	// A prefill root whose forward slice is still to come makes no leg.
	l = NewBook(0)
	l.Add(Extract(sgExport(3, sgPrefillRoot, sgPrefillRest[0], sgPrefillRest[1])))
	if n := len(l.Records()); n != 0 {
		t.Errorf("%d records from a leg missing its forward slice", n)
	}
}

// TestSGLangSpansRecognised: only spans with SGLang's names and attributes
// are read; a span named like a root without module sglang::request is not.
func TestSGLangSpansRecognised(t *testing.T) {
	notRoot := sgPrefillRoot
	notRoot.root = false
	b := Extract(sgExport(4, notRoot, sgPrefillRest[0], sgPrefillRest[1], sgDecodeRest[1], sgDecodeRest[3]))
	if len(b.SGLang) != 3 || b.Ignored != 2 { // the thread span and two slices; the false root and decode_transferred
		t.Errorf("%d SGLang spans, %d ignored; want 3 and 2", len(b.SGLang), b.Ignored)
	}
	b = Extract(sgExport(4, sgPrefillRoot, sgDecodeRoot))
	for _, sp := range b.SGLang {
		if !sp.Root || sp.RID != "cmpl-7ab" || (sp.Role != rolePrefill && sp.Role != roleDecode) {
			t.Errorf("root read as %+v", sp)
		}
	}
	unified := sgPrefillRoot
	unified.name = " Req cmpl-7ab"
	if b := Extract(sgExport(4, unified)); len(b.SGLang) != 1 || b.SGLang[0].Role != roleUnified {
		t.Errorf("unified root read as %+v", b.SGLang)
	}
}

// TestSGLangUnified: a request one engine served holds queue, prefill and
// decode from its slices.
func TestSGLangUnified(t *testing.T) {
	root := sgSpan{inst: "u0", id: 1, name: " Req cmpl-9", start: 0, end: 2.5, root: true, rid: "cmpl-9"}
	l := NewBook(0)
	l.Add(Extract(sgExport(5, root, sgPrefillRest[0], sgPrefillRest[1], sgPrefillRest[2],
		sgSpan{inst: "u0", id: 20, parent: 2, name: sglangDecodeForward, start: 0.75, end: 2.4})))
	recs := l.Records()
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	for ph, w := range map[Phase]float64{PhaseQueue: 0.2, PhasePrefill: 0.4, PhaseDecode: 2.4 - 0.7} {
		if v, ok := recs[0].Phase(ph); !ok || !near(v, w) {
			t.Errorf("%s = %v (%v), want %v", ph, v, ok, w)
		}
	}
	if !near(recs[0].TTFT, 0.7) {
		t.Errorf("ttft %v, want 0.7", recs[0].TTFT)
	}
}

// TestSGLangAssemblerBounded: spans waiting for their leg are bounded by
// the book's span budget, oldest traces dropped first.
func TestSGLangAssemblerBounded(t *testing.T) {
	l := NewBook(10)
	for tr := byte(1); tr <= 20; tr++ {
		l.Add(Extract(sgExport(tr, sgPrefillRest[0], sgPrefillRest[1])))
	}
	if n := l.sglang.n; n > 10 {
		t.Errorf("%d spans held, budget 10", n)
	}
	if _, ok := l.sglang.traces[pcommon.TraceID{15: 1}.String()]; ok {
		t.Error("the oldest trace is still held")
	}
	if _, ok := l.sglang.traces[pcommon.TraceID{15: 20}.String()]; !ok {
		t.Error("the newest trace was dropped")
	}
}

// TestSGLangRoomPairs: SGLang's router sends a request to both engines at
// once, and each engine may give it its own rid; the two legs are paired
// by their bootstrap_room, in one trace or two, and two requests of one
// trace with different rooms stay apart.
func TestSGLangRoomPairs(t *testing.T) {
	withRoom := func(sp sgSpan, rid string, room string) sgSpan {
		sp.rid, sp.room = rid, room
		return sp
	}
	f := func(name string, decodeTrace byte, decodeRoom string, wantRecords int) {
		t.Run(name, func(t *testing.T) {
			l := NewBook(0)
			l.Add(Extract(sgExport(7, append([]sgSpan{withRoom(sgPrefillRoot, "p-rid", "0x2a")}, sgPrefillRest...)...)))
			l.Add(Extract(sgExport(decodeTrace, append([]sgSpan{withRoom(sgDecodeRoot, "d-rid", decodeRoom)}, sgDecodeRest...)...)))
			recs := l.Records()
			if len(recs) != wantRecords {
				t.Fatalf("%d records, want %d: %+v", len(recs), wantRecords, recs)
			}
			if wantRecords == 1 {
				if !recs[0].Complete() {
					t.Fatalf("legs %q, want both", recs[0].Legs)
				}
				if v, ok := recs[0].Phase(PhaseDecodeQueue); !ok || !near(v, 0.3) {
					t.Errorf("decode_queue %v (%v), want 0.3", v, ok)
				}
			}
		})
	}
	f("one trace, one room", 7, "0x2a", 1)
	f("two traces, one room", 8, "0x2a", 1)
	f("one trace, two rooms", 7, "0x2b", 2)
}
