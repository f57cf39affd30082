package api

import (
	"slices"
	"time"

	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/journey"
)

// MaxVerdictExamples is how many example requests a verdict names.
const MaxVerdictExamples = 3

// RequestExample is a request that shows what a verdict says: its slowest
// phase is the phase of the stage the verdict names.
type RequestExample struct {
	ID      string        `json:"id"`
	Phase   journey.Phase `json:"phase"`
	Seconds float64       `json:"seconds"`
	Arrival float64       `json:"arrival"`
	Pool    string        `json:"pool,omitempty"`
}

// stagePhase is the request phase of each stage a verdict can name.
var stagePhase = map[diagnose.Class]journey.Phase{
	diagnose.PrefillBound:   journey.PhasePrefill,
	diagnose.KVBound:        journey.PhaseKVTransfer,
	diagnose.AdmissionBound: journey.PhaseDecodeQueue,
	diagnose.DecodeBound:    journey.PhaseDecode,
}

// verdictExamples picks up to MaxVerdictExamples requests of the ledger in
// flight during the verdict's window whose slowest phase is the phase of
// the stage the verdict names, longest first; nil when it names no stage.
func verdictExamples(l *journey.Book, v *diagnose.Verdict) []RequestExample {
	if v == nil || v.At.IsZero() {
		return nil
	}
	ph, ok := stagePhase[v.Class]
	if !ok {
		return nil
	}
	from := v.At.Add(-time.Duration(v.Window * float64(time.Second)))
	var out []RequestExample
	l.Scan(func(r *journey.Record) {
		if r.Arrival.After(v.At) || r.E2E >= 0 && r.Arrival.Add(time.Duration(r.E2E*float64(time.Second))).Before(from) {
			return
		}
		if slowest(r) != ph {
			return
		}
		d, _ := r.Phase(ph)
		if len(out) == MaxVerdictExamples && d <= out[len(out)-1].Seconds {
			return
		}
		// Keep the longest few, longest first; of equals, the older.
		i, _ := slices.BinarySearchFunc(out, d, func(e RequestExample, d float64) int {
			if e.Seconds >= d {
				return -1
			}
			return 1
		})
		out = slices.Insert(out, i, RequestExample{ID: r.ID, Phase: ph, Seconds: d, Arrival: float64(r.Arrival.UnixNano()) / 1e9, Pool: r.Pool})
		out = out[:min(len(out), MaxVerdictExamples)]
	})
	return out
}

// slowest is the record's longest known phase ("" with none known).
func slowest(r *journey.Record) journey.Phase {
	var best journey.Phase
	longest := -1.0
	for _, iv := range r.Waterfall {
		if d := iv.End - iv.Start; d > longest {
			best, longest = iv.Phase, d
		}
	}
	return best
}

// snapshotExamples are the verdict's examples from the request ledger.
func (s *Server) snapshotExamples(v *diagnose.Verdict) []RequestExample {
	if s.Requests == nil {
		return nil
	}
	return verdictExamples(s.Requests, v)
}

// onlyID keeps the records of one request id (?id=, the verdict's example
// links).
func onlyID(recs []journey.Record, id string) []journey.Record {
	keep := recs[:0:0]
	for _, r := range recs {
		if r.ID == id {
			keep = append(keep, r)
		}
	}
	return keep
}
