package reqtrace

// Request is one request's ledger entry: its spans and what the causal-chain
// check found.
type Request struct {
	ID        ID
	Pos       Pos
	Kind      Kind
	Gen       Generation
	CtxServer string
	GenServer string
	// CtxAligned/GenAligned tell whether a clock-sync estimate was applied.
	CtxAligned bool
	GenAligned bool
	Spans      [NumSpans]Value
	Violations []Violation
	// Segments place the spans on one time axis (seconds from the request's
	// first instant) for the waterfall; empty when placement is untrusted.
	Segments []Segment
	// OutputTokens is -1 when unknown.
	OutputTokens int64
}

// Segment is one span placed on the request's time axis.
type Segment struct {
	Span       Span
	Start, End float64
}

// Compute derives the spans of one record (docs/trtllm.md#phases) after aligning
// ctx/gen times to the disagg clock with cs, and checks the causal chain
// (docs/trtllm.md#causal-chain). cs and u may be nil.
func Compute(r Record, cs *ClockSync, u Usage) Request {
	q := Request{ID: r.ID, Pos: r.Pos, Kind: r.Kind, Gen: r.Gen, OutputTokens: -1}
	if tu, ok := u[r.ID]; ok && r.ID != "" {
		q.OutputTokens = tu.CompletionTokens
	}
	if r.Kind == KindWorker {
		computeWorker(&q, r.Worker.Timing)
	} else {
		computeDisagg(&q, r, cs)
	}
	q.Spans[TPOT] = tpot(q.Spans[Decode], q.OutputTokens)
	return q
}

// align maps worker times to the reference clock: aligned = t − θ. Unknown
// (0) stays unknown.
func align(t Timing, cs *ClockSync, server string) (Timing, bool) {
	e, ok := cs.Lookup(server)
	if !ok {
		return t, false
	}
	for _, f := range t.fields() {
		if *f != 0 {
			*f -= e.Offset
		}
	}
	return t, true
}

type stamps struct {
	srvArrival, arrival, sched, first, last, srvFirst, kvStart, kvEnd Stamp
}

// stampNames are built once: the names end up in reasons and violations
// of every request, and concatenating them per request dominated Build.
var stampNames = func() map[string][8]string {
	m := map[string][8]string{}
	for _, c := range []string{"ctx", "gen", "worker"} {
		var n [8]string
		for i, f := range [8]string{"server_arrival_time", "arrival_time", "first_scheduled_time", "first_token_time",
			"last_token_time", "server_first_token_time", "kv_cache_transfer_start", "kv_cache_transfer_end"} {
			n[i] = c + "." + f
		}
		m[c] = n
	}
	return m
}()

func stampsOf(clock string, t Timing) stamps {
	n := stampNames[clock]
	st := func(i int, v float64) Stamp { return Stamp{Name: n[i], Clock: clock, T: v} }
	return stamps{
		srvArrival: st(0, t.ServerArrival),
		arrival:    st(1, t.Arrival),
		sched:      st(2, t.FirstScheduled),
		first:      st(3, t.FirstToken),
		last:       st(4, t.LastToken),
		srvFirst:   st(5, t.ServerFirstToken),
		kvStart:    st(6, t.KVStart),
		kvEnd:      st(7, t.KVEnd),
	}
}

func computeDisagg(q *Request, r Record, cs *ClockSync) {
	q.CtxServer, q.GenServer = r.Ctx.Server, r.GenPhase.Server
	ct, ca := align(r.Ctx.Timing, cs, r.Ctx.Server)
	gt, ga := align(r.GenPhase.Timing, cs, r.GenPhase.Server)
	q.CtxAligned, q.GenAligned = ca && r.Ctx.Present, ga && r.GenPhase.Present
	c, g := stampsOf("ctx", ct), stampsOf("gen", gt)
	dArr := Stamp{"disagg_server_arrival_time", "disagg", r.DisaggArrival}
	dDisp := Stamp{"disagg_ctx_dispatch_time", "disagg", r.DisaggDispatch}
	dFirst := Stamp{"disagg_server_first_token_time", "disagg", r.DisaggFirstToken}

	q.Violations = checkChain(
		[]Stamp{dArr, dDisp, c.srvArrival, c.arrival, c.sched, c.first, c.last, c.srvFirst,
			g.srvArrival, g.arrival, g.kvStart, g.kvEnd, g.sched, g.first, g.srvFirst, dFirst},
		[][2]Stamp{{g.first, g.last}})

	if r.Ctx.Present {
		q.Spans[Queue] = diff(c.arrival, c.sched)
		q.Spans[Prefill] = diff(c.sched, c.first)
	} else {
		q.Spans[Queue], q.Spans[Prefill] = missing("no ctx phase"), missing("no ctx phase")
	}
	switch {
	case !r.GenPhase.Present:
		q.Spans[KVTransfer] = missing("no gen phase")
	case r.Gen == GenB && g.kvStart.T == 0:
		// Generation B's header-derived phases lost the KV times upstream.
		q.Spans[KVTransfer] = missing("no gen.kv_cache_transfer_start (generation B drops it)")
	default:
		q.Spans[KVTransfer] = diff(g.kvStart, g.kvEnd)
	}
	q.Spans[TTFT] = diff(dArr, dFirst)
	if r.GenPhase.Present {
		q.Spans[E2E] = diff(dArr, g.last)
		q.Spans[Decode] = diff(dFirst, g.last)
	} else {
		q.Spans[E2E], q.Spans[Decode] = missing("no gen phase"), missing("no gen phase")
	}
	// E2E and decode subtract a gen-clock time from a disagg-clock time:
	// they are only as good as the alignment, which the chain vouches for.
	if v, bad := firstCross(q.Violations); bad {
		reason := "clock unaligned: " + v.Later + " before " + v.Earlier
		for _, s := range []Span{E2E, Decode} {
			if q.Spans[s].OK {
				q.Spans[s] = missing(reason)
			}
		}
		return
	}
	q.Segments = placeDisagg(q, r.DisaggArrival, c, g, dFirst)
}

func placeDisagg(q *Request, origin float64, c, g stamps, dFirst Stamp) []Segment {
	if origin == 0 {
		return nil
	}
	var segs []Segment
	add := func(s Span, a, b Stamp) {
		if q.Spans[s].OK {
			segs = append(segs, Segment{Span: s, Start: a.T - origin, End: b.T - origin})
		}
	}
	add(Queue, c.arrival, c.sched)
	add(Prefill, c.sched, c.first)
	add(KVTransfer, g.kvStart, g.kvEnd)
	add(Decode, dFirst, g.last)
	return segs
}

// computeWorker handles a worker's own record: all times on one clock, so no
// alignment is needed; TTFT and E2E are measured from the executor arrival.
func computeWorker(q *Request, t Timing) {
	w := stampsOf("worker", t)
	q.Spans[Queue] = diff(w.arrival, w.sched)
	q.Spans[Prefill] = diff(w.sched, w.first)
	q.Spans[KVTransfer] = diff(w.kvStart, w.kvEnd)
	q.Spans[TTFT] = diff(w.arrival, w.first)
	q.Spans[E2E] = diff(w.arrival, w.last)
	q.Spans[Decode] = diff(w.first, w.last)
	if w.arrival.T == 0 {
		return
	}
	add := func(s Span, a, b Stamp) {
		if q.Spans[s].OK {
			q.Segments = append(q.Segments, Segment{Span: s, Start: a.T - w.arrival.T, End: b.T - w.arrival.T})
		}
	}
	add(Queue, w.arrival, w.sched)
	add(Prefill, w.sched, w.first)
	add(KVTransfer, w.kvStart, w.kvEnd)
	add(Decode, w.first, w.last)
}

// tpot = decode / (output_tokens − 1): the first token belongs to TTFT.
func tpot(decode Value, tokens int64) Value {
	switch {
	case tokens < 0:
		return missing("no usage for request")
	case tokens < 2:
		return missing("completion_tokens < 2")
	case !decode.OK:
		return missing("no decode span")
	}
	return known(decode.Seconds / float64(tokens-1))
}
