package sim

import "time"

// Completion is one completed request as its client saw it: sent at
// Arrival, its first token at First, its last at End, on the wall clock of
// the model's epoch. A load generator in a test builds its own results
// from these, and they are the same requests the decode engines count.
type Completion struct {
	ID                        uint64
	Group                     string
	Arrival, First, End       time.Time
	InputTokens, OutputTokens int
}

// OnComplete has f called with every request decode completes from now
// on, in completion order (nil: none).
func (m *Model) OnComplete(f func(Completion)) { m.completed = f }

func (m *Model) completion(d *engine, r *request) Completion {
	at := func(ns int64) time.Time { return m.epoch.Add(time.Duration(ns)) }
	return Completion{ID: r.id, Group: d.inst.grp.spec.Name, Arrival: at(r.arrival), First: at(r.clientFirst), End: at(m.now),
		InputTokens: m.sc.InputTokens, OutputTokens: r.generated}
}
