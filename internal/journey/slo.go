package journey

// The SLOs a request can be held to on its own: its time to first token
// and its end-to-end latency. (The inter-token latency needs each token's
// time, which no span carries.)
const (
	SLOTTFT = "ttft"
	SLOE2E  = "e2e"
)

// ttftPhases are the phases before the first token: one of them broke a
// missed TTFT. The decode phase also holds the decode engine's step for
// the first token, but it is mostly the tokens after it, so it is not
// blamed for a TTFT.
var ttftPhases = []Phase{PhaseQueue, PhasePrefill, PhaseKVTransfer, PhaseDecodeQueue}

// Miss is one SLO a request missed and the phase that took the largest
// share of it.
type Miss struct {
	SLO       string  `json:"slo"`
	Seconds   float64 `json:"seconds"`
	Threshold float64 `json:"threshold_seconds"`
	// Blame is the longest known phase of the missed span; Share its part
	// of Seconds. Without a known phase Blame is empty and Reason says
	// why.
	Blame  Phase   `json:"phase,omitempty"`
	Share  float64 `json:"share,omitempty"`
	Reason string  `json:"reason,omitempty"`
}

// Misses returns the SLOs r missed: TTFT over ttft, E2E over e2e (a
// threshold of 0 is no SLO). A request whose TTFT or E2E is unknown
// misses nothing that it cannot be shown to.
func Misses(r *Record, ttft, e2e float64) []Miss {
	var out []Miss
	if ttft > 0 && r.TTFT > ttft {
		out = append(out, blame(r, SLOTTFT, r.TTFT, ttft, ttftPhases))
	}
	if e2e > 0 && r.E2E > e2e {
		out = append(out, blame(r, SLOE2E, r.E2E, e2e, Phases))
	}
	return out
}

func blame(r *Record, slo string, v, threshold float64, phases []Phase) Miss {
	m := Miss{SLO: slo, Seconds: v, Threshold: threshold}
	best := -1.0
	for _, ph := range phases {
		if d, ok := r.Phase(ph); ok && d > best {
			m.Blame, best = ph, d
		}
	}
	if best < 0 {
		m.Reason = "no phase of it is known"
		return m
	}
	m.Share = best / v
	return m
}
