package point

import "reflect"

// Phases are where a pool's time to first token goes over the window: the
// mean seconds of each phase, from the phase histograms each engine exports
// (docs/pools.md#where-ttft-goes). A phase no source of the pool exports is
// absent with the sources that would, never folded into another; what the
// phases leave of the whole request's TTFT, given beside them, is Untimed.
type Phases struct {
	// Router is the routers' own time before an engine has the request:
	// waiting in a router's queue and its pipeline ahead of the engines.
	Router    Num `json:"router_seconds"`
	Queue     Num `json:"queue_seconds"`
	Prefill   Num `json:"prefill_seconds"`
	Bootstrap Num `json:"bootstrap_seconds"`
	// Handover is the router's time between the legs: from the prefill
	// leg's end to the decode leg's send.
	Handover    Num `json:"handover_seconds"`
	Transfer    Num `json:"kv_transfer_seconds"`
	FirstDecode Num `json:"first_decode_step_seconds"`
	// PrefillLeg is the prefill leg as a router times it (its request to
	// the prefill instance, answered): queue, prefill and what lies between
	// them together, so it is no phase of its own and enters no sum; it
	// checks the engines' queue and prefill phases from outside.
	PrefillLeg Num `json:"router_prefill_leg_seconds"`
	// TTFT is the mean time to first token of the whole request, and
	// TTFTSource what timed it: the router, decode instances that time
	// from the arrival, or the prefill leg's mean plus the decode leg's
	// (means add, whichever legs belong together). The decode leg alone is
	// never taken for it.
	TTFT       Num    `json:"ttft_seconds"`
	TTFTSource string `json:"ttft_source,omitempty"`
	// Untimed is TTFT less the phases that are there: the time no phase
	// histogram covers (the router, the hand-over, waiting for a decode
	// slot, and any phase absent above).
	Untimed Num `json:"untimed_seconds"`
}

// Phase names the phases in order, as the API writes them.
var PhaseNames = []string{"router_seconds", "queue_seconds", "prefill_seconds", "bootstrap_seconds", "handover_seconds", "kv_transfer_seconds", "first_decode_step_seconds"}

// Phase returns phase i of PhaseNames' order.
func (p *Phases) Phase(i int) *Num {
	return [...]*Num{&p.Router, &p.Queue, &p.Prefill, &p.Bootstrap, &p.Handover, &p.Transfer, &p.FirstDecode}[i]
}

// MarshalJSON adds the reasons of absent values.
func (p Phases) MarshalJSON() ([]byte, error) {
	type alias Phases
	return withAbsent(p, alias(p))
}

// UnmarshalJSON reads what MarshalJSON writes, reasons included.
func (p *Phases) UnmarshalJSON(b []byte) error {
	type alias Phases
	return withoutAbsent(b, reflect.ValueOf(p).Elem(), (*alias)(p))
}

// WhyOlder is the reason of what a point kept by an older version lacks.
const WhyOlder = "not kept by the version of ptdmon that made this point"

// FromOlder marks what phases decoded from a version-1 checkpoint lack: it
// had no untimed share, and its TTFT was the decode leg's where decode had
// the histogram, not the whole request's.
func (p *Phases) FromOlder() {
	if p.TTFT.OK() {
		p.TTFT = Absent(WhyOlder + ": its TTFT was a leg's, not the whole request's")
	}
	p.Untimed = Absent(WhyOlder)
}

// AbsentPhases is Phases with every value absent for why.
func AbsentPhases(why string) Phases {
	n := Absent(why)
	return Phases{Router: n, Queue: n, Prefill: n, Bootstrap: n, Handover: n, Transfer: n, FirstDecode: n, PrefillLeg: n, TTFT: n, Untimed: n}
}
