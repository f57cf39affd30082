package sim

// PhaseTruth is where a group's requests spent their time to first token,
// summed over the requests that completed, from the model's own timestamps
// rather than any exposition: the truth the ledger's TTFT phases are
// checked against (docs/sim.md#ttft-phases).
type PhaseTruth struct {
	Requests uint64
	// Seconds summed over the requests: waiting for prefill, prefill
	// compute, the KV copy (loads that failed excluded: no copy is timed)
	// and the first decode step (admission to first token).
	Queue, Prefill, Transfer, FirstDecode float64
	Transfers                             uint64 // requests whose copy is in Transfer
}

// PhaseTruth returns group's sums so far.
func (m *Model) PhaseTruth(group string) PhaseTruth {
	if t := m.phases[group]; t != nil {
		return *t
	}
	return PhaseTruth{}
}

// phaseDone adds a request that completed on decode engine d.
func (m *Model) phaseDone(d *engine, r *request) {
	if m.phases == nil {
		m.phases = map[string]*PhaseTruth{}
	}
	name := d.inst.grp.spec.Name
	t := m.phases[name]
	if t == nil {
		t = &PhaseTruth{}
		m.phases[name] = t
	}
	t.Requests++
	t.Queue += float64(r.pStart-r.queued) / 1e9
	t.Prefill += float64(r.pEnd-r.pStart) / 1e9
	if !r.recompute {
		t.Transfer += float64(r.dReady-r.xferStart) / 1e9
		t.Transfers++
	}
	t.FirstDecode += float64(r.firstTok-r.dStart) / 1e9
}
