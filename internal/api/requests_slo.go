package api

import (
	"fmt"

	"github.com/ptdmon/ptdmon/internal/journey"
	"github.com/ptdmon/ptdmon/internal/slo"
)

// MissSummary counts, per pool, each SLO's misses by the phase blamed for
// them ("unknown" when no phase of the missed span is known).
type MissSummary map[string]map[string]map[string]int

// parseSLOMiss reads ?slo_miss=ttft|e2e; it needs that SLO configured.
func parseSLOMiss(v string, th slo.Thresholds) (string, error) {
	switch {
	case v == "":
		return "", nil
	case v == journey.SLOTTFT && th.TTFT > 0, v == journey.SLOE2E && th.E2E > 0:
		return v, nil
	case v == journey.SLOTTFT || v == journey.SLOE2E:
		return "", fmt.Errorf("slo_miss=%s: no slo.%s threshold configured (docs/traces.md)", v, v)
	}
	return "", fmt.Errorf("slo_miss=%q: want ttft or e2e", v)
}

// onlyMissing keeps the records that missed the named SLO.
func onlyMissing(recs []journey.Record, name string, th slo.Thresholds) []journey.Record {
	keep := recs[:0:0]
	for i := range recs {
		for _, m := range journey.Misses(&recs[i], th.TTFT, th.E2E) {
			if m.SLO == name {
				keep = append(keep, recs[i])
				break
			}
		}
	}
	return keep
}

// summarizeMisses counts the misses of recs per pool, SLO and blamed phase;
// nil without thresholds.
func summarizeMisses(recs []journey.Record, th slo.Thresholds) MissSummary {
	if th.TTFT <= 0 && th.E2E <= 0 {
		return nil
	}
	out := MissSummary{}
	for i := range recs {
		for _, m := range journey.Misses(&recs[i], th.TTFT, th.E2E) {
			pool := out[recs[i].Pool]
			if pool == nil {
				pool = map[string]map[string]int{}
				out[recs[i].Pool] = pool
			}
			if pool[m.SLO] == nil {
				pool[m.SLO] = map[string]int{}
			}
			ph := string(m.Blame)
			if ph == "" {
				ph = "unknown"
			}
			pool[m.SLO][ph]++
		}
	}
	return out
}
