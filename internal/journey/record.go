package journey

import (
	"time"
)

// Phase names one part of a request's time, in the order a disaggregated
// request passes them.
type Phase string

// The phases of a record.
const (
	PhaseQueue       Phase = "queue" // on the prefill engine (or the only one)
	PhasePrefill     Phase = "prefill"
	PhaseKVTransfer  Phase = "kv_transfer"
	PhaseDecodeQueue Phase = "decode_queue"
	PhaseDecode      Phase = "decode"
)

// Phases in waterfall order.
var Phases = []Phase{PhaseQueue, PhasePrefill, PhaseKVTransfer, PhaseDecodeQueue, PhaseDecode}

// ParsePhase reads a phase name.
func ParsePhase(s string) (Phase, bool) {
	for _, p := range Phases {
		if string(p) == s {
			return p, true
		}
	}
	return "", false
}

// Where a phase was read.
const (
	SidePrefill = "prefill" // the prefill leg's span
	SideDecode  = "decode"  // the decode leg's span
	sideKVSpan  = "kv_span" // a KV-transfer span
	sideBetween = "between" // the gap between the two legs
)

// Interval is one phase on the request's timeline, in seconds after its
// arrival.
type Interval struct {
	Phase    Phase   `json:"phase"`
	Start    float64 `json:"start"`
	End      float64 `json:"end"`
	Side     string  `json:"side"`
	Inferred bool    `json:"inferred,omitempty"`
}

// Record is one request's journey across its legs.
type Record struct {
	// ID is the request id the engines were given (gen_ai.request.id),
	// or the trace id when they were given none.
	ID              string
	TraceID         string
	Pool            string
	Model           string
	PrefillInstance string
	DecodeInstance  string
	// Arrival is when the first leg's engine received the request.
	Arrival time.Time
	// Legs says which legs were received: "prefill+decode", "prefill",
	// "decode" (a decode leg, or a request served by one engine).
	Legs string
	// Waterfall holds the known phases in order; Absent the others, with
	// the reason.
	Waterfall []Interval
	Absent    map[Phase]string
	// TTFT and E2E in seconds from Arrival; -1 when unknown.
	TTFT, E2E float64
	// PromptTokens and CompletionTokens: -1 when unknown.
	PromptTokens, CompletionTokens int64
}

// Phase returns the duration of phase p, and whether it is known.
func (r *Record) Phase(p Phase) (float64, bool) {
	for _, iv := range r.Waterfall {
		if iv.Phase == p {
			return iv.End - iv.Start, true
		}
	}
	return 0, false
}

// Complete says whether both legs of a disaggregated request are in.
func (r *Record) Complete() bool { return r.Legs == "prefill+decode" }

// Reasons a phase is absent.
const (
	reasonNoDecode   = "the decode leg's span has not been received"
	reasonNoPrefill  = "no prefill leg received: served by one engine, or its prefill span is still to come"
	reasonInseparate = "inseparable from the wait for the remote KV (the decode engine counts it as queue time) without a KV-transfer span"
	reasonNegative   = "negative: the two engines' clocks disagree"
	reasonNoSlice    = "a stage slice it is measured from was not received"
)

func missing(attr string) string { return "attribute " + attr + " missing" }

// legTimes are the moments of one leg read from its span: scheduled is
// when the engine began computing it, first when it produced its first
// token, last when its last.
type legTimes struct {
	queued, scheduled, first, last time.Time
	ok                             map[Phase]string // phases with the attribute they lack
}

func times(l *Leg) legTimes {
	if l.At != nil {
		return measured(l.At, l.Role == roleDecode)
	}
	t := legTimes{ok: map[Phase]string{}}
	if l.TTFT < 0 {
		t.ok[PhaseQueue], t.ok[PhasePrefill], t.ok[PhaseDecode] = missing(AttrTTFT), missing(AttrTTFT), missing(AttrTTFT)
		return t
	}
	t.first = l.Start.Add(dur(l.TTFT))
	if l.Prefill < 0 {
		t.ok[PhaseQueue], t.ok[PhasePrefill] = missing(AttrPrefill), missing(AttrPrefill)
	} else {
		t.scheduled = t.first.Add(-dur(l.Prefill))
		if l.Queue < 0 {
			t.ok[PhaseQueue] = missing(AttrQueue)
		} else {
			t.queued = t.scheduled.Add(-dur(l.Queue))
		}
	}
	if l.Decode < 0 {
		t.ok[PhaseDecode] = missing(AttrDecode)
	} else {
		t.last = t.first.Add(dur(l.Decode))
	}
	return t
}

// measured takes the moments spans gave; a phase whose ends are not both
// known is absent. A decode leg has no prefill of its own: its first token
// came from the prefill engine.
func measured(at *LegTimes, decodeOnly bool) legTimes {
	t := legTimes{queued: at.Queued, scheduled: at.Scheduled, first: at.First, last: at.Last, ok: map[Phase]string{}}
	if at.Queued.IsZero() || at.Scheduled.IsZero() {
		t.ok[PhaseQueue] = reasonNoSlice
	}
	if at.Scheduled.IsZero() || at.First.IsZero() && !decodeOnly {
		t.ok[PhasePrefill] = reasonNoSlice
	}
	if at.Last.IsZero() || at.First.IsZero() && !decodeOnly {
		t.ok[PhaseDecode] = reasonNoSlice
	}
	return t
}

func dur(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// join builds the record of a request from its legs, either of which may
// be nil, and the KV-transfer span of its trace (nil when none).
//
// With both legs the phases are: queue and prefill from the prefill leg;
// the KV transfer from the KV span, else inferred as the gap from the
// prefill leg's end to the moment the decode engine scheduled the request
// (vLLM's decode engine waits for the remote KV in its queue, so that wait
// ends when it schedules); queue on decode from the decode leg, less the
// KV span's part of it; decode from the decode leg's scheduling to its
// last token.
func join(p, d *Leg, kv *KVSpan) Record {
	r := Record{Absent: map[Phase]string{}, TTFT: -1, E2E: -1, PromptTokens: -1, CompletionTokens: -1}
	first := p
	if first == nil {
		first = d
	}
	if first == nil {
		return r
	}
	r.Arrival, r.TraceID, r.ID, r.Pool, r.Model = first.Start, first.TraceID, first.RequestID, first.Pool, first.Model
	if r.ID == "" {
		r.ID = r.TraceID
	}
	add := func(ph Phase, from, to time.Time, side string, inferred bool) {
		if to.Before(from) {
			r.Absent[ph] = reasonNegative
			return
		}
		r.Waterfall = append(r.Waterfall, Interval{Phase: ph, Start: r.since(from), End: r.since(to), Side: side, Inferred: inferred})
	}
	// The phases one engine served alone: queue, prefill and decode.
	own := func(l *Leg, side string, decode bool) legTimes {
		t := times(l)
		for _, ph := range []Phase{PhaseQueue, PhasePrefill} {
			if why, bad := t.ok[ph]; bad {
				r.Absent[ph] = why
			}
		}
		if t.ok[PhaseQueue] == "" {
			add(PhaseQueue, t.queued, t.scheduled, side, false)
		}
		// A decode leg that names itself computed no prefill: its first
		// token came with the KV, and its decode starts when it is
		// scheduled.
		decodeOnly, from := l.Role == roleDecode, t.first
		if decodeOnly {
			r.Absent[PhasePrefill], from = reasonNoPrefill, t.scheduled
		} else if t.ok[PhasePrefill] == "" {
			add(PhasePrefill, t.scheduled, t.first, side, false)
		}
		if decode {
			if why, bad := t.ok[PhaseDecode]; bad {
				r.Absent[PhaseDecode] = why
			} else {
				add(PhaseDecode, from, t.last, side, false)
			}
		}
		return t
	}
	switch {
	case p != nil && d == nil:
		r.Legs, r.PrefillInstance = "prefill", p.Instance
		own(p, SidePrefill, false)
		r.PromptTokens = p.PromptTokens
		for _, ph := range []Phase{PhaseKVTransfer, PhaseDecodeQueue, PhaseDecode} {
			r.Absent[ph] = reasonNoDecode
		}
		return r
	case p == nil:
		r.Legs, r.DecodeInstance = "decode", d.Instance
		t := own(d, SideDecode, true)
		r.Absent[PhaseKVTransfer], r.Absent[PhaseDecodeQueue] = reasonNoPrefill, reasonNoPrefill
		r.PromptTokens, r.CompletionTokens = d.PromptTokens, d.CompletionTokens
		r.ends(d, t)
		return r
	}
	r.Legs, r.PrefillInstance, r.DecodeInstance = "prefill+decode", p.Instance, d.Instance
	r.PromptTokens, r.CompletionTokens = p.PromptTokens, d.CompletionTokens
	if r.Model == "" {
		r.Model = d.Model
	}
	own(p, SidePrefill, false)
	t := times(d)
	switch {
	case kv != nil:
		add(PhaseKVTransfer, kv.Start, kv.End, sideKVSpan, false)
		if why, bad := t.ok[PhaseQueue]; bad {
			r.Absent[PhaseDecodeQueue] = why
		} else {
			// The decode queue less the part of it the transfer covers.
			q := t.scheduled.Sub(t.queued) - overlap(t.queued, t.scheduled, kv.Start, kv.End)
			add(PhaseDecodeQueue, t.scheduled.Add(-q), t.scheduled, SideDecode, false)
		}
	case t.ok[PhasePrefill] != "":
		r.Absent[PhaseKVTransfer], r.Absent[PhaseDecodeQueue] = t.ok[PhasePrefill], t.ok[PhasePrefill]
	default:
		add(PhaseKVTransfer, p.End, t.scheduled, sideBetween, true)
		r.Absent[PhaseDecodeQueue] = reasonInseparate
	}
	switch {
	case t.ok[PhasePrefill] != "":
		r.Absent[PhaseDecode] = t.ok[PhasePrefill]
	case t.ok[PhaseDecode] != "":
		r.Absent[PhaseDecode] = t.ok[PhaseDecode]
	default:
		// The decode engine's step for the first token is decode compute.
		add(PhaseDecode, t.scheduled, t.last, SideDecode, false)
	}
	r.ends(d, t)
	return r
}

// ends sets TTFT and E2E from the leg that produced the tokens.
func (r *Record) ends(d *Leg, t legTimes) {
	if !t.first.IsZero() {
		r.TTFT = r.since(t.first)
	}
	if d.E2E >= 0 {
		r.E2E = r.since(d.Start.Add(dur(d.E2E)))
	} else if !d.End.IsZero() {
		r.E2E = r.since(d.End)
	}
}

func (r *Record) since(t time.Time) float64 { return t.Sub(r.Arrival).Seconds() }

func overlap(a0, a1, b0, b1 time.Time) time.Duration {
	lo, hi := a0, a1
	if b0.After(lo) {
		lo = b0
	}
	if b1.Before(hi) {
		hi = b1
	}
	if hi.Before(lo) {
		return 0
	}
	return hi.Sub(lo)
}
