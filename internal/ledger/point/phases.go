package point

import "reflect"

// Phases are where a pool's time to first token goes over the window: the
// mean seconds of each phase, from the phase histograms each engine exports
// (docs/pools.md#where-ttft-goes). A phase no source of the pool exports is
// absent with the sources that would, never folded into another; so the
// phases need not add up to TTFT, which is given beside them.
type Phases struct {
	Queue       Num `json:"queue_seconds"`
	Prefill     Num `json:"prefill_seconds"`
	Bootstrap   Num `json:"bootstrap_seconds"`
	Transfer    Num `json:"kv_transfer_seconds"`
	FirstDecode Num `json:"first_decode_step_seconds"`
	// TTFT is the mean time to first token the pool's instances observed
	// (decode's where it has the histogram, else prefill's).
	TTFT Num `json:"ttft_seconds"`
}

// Phase names the phases in order, as the API writes them.
var PhaseNames = []string{"queue_seconds", "prefill_seconds", "bootstrap_seconds", "kv_transfer_seconds", "first_decode_step_seconds"}

// Phase returns phase i of PhaseNames' order.
func (p *Phases) Phase(i int) *Num {
	return [...]*Num{&p.Queue, &p.Prefill, &p.Bootstrap, &p.Transfer, &p.FirstDecode}[i]
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

// AbsentPhases is Phases with every value absent for why.
func AbsentPhases(why string) Phases {
	n := Absent(why)
	return Phases{n, n, n, n, n, n}
}
