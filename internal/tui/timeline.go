package tui

import (
	"strings"

	"github.com/ptdmon/ptdmon/internal/api"
	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// stageMarks are the verdict timeline's letters, one per tick.
var stageMarks = map[diagnose.Stage]rune{
	"balanced": '·', "prefill": 'P', "kv": 'K', "admission": 'A', "decode": 'D', "mixed": 'M', "insufficient": ' ',
}

// markVerdicts pairs each point with the verdict of the span covering it.
func markVerdicts(pts []ledger.Point, spans []api.VerdictSpan) []Tick {
	out := make([]Tick, len(pts))
	k := 0
	for i := range pts {
		out[i].Point = pts[i]
		t := pts[i].Time
		for k < len(spans) && spans[k].To.Before(t) {
			k++
		}
		if k < len(spans) && !spans[k].From.After(t) {
			out[i].Verdict = spans[k].Stage
		}
	}
	return out
}

// verdictStrip draws one letter per tick (the newest width of them),
// aligned with the sparklines: P prefill, K KV, A admission, D decode,
// M groups differ, · balanced, blank not enough data or not known.
func verdictStrip(stages []diagnose.Stage, width int) string {
	if len(stages) > width {
		stages = stages[len(stages)-width:]
	}
	var b strings.Builder
	for _, s := range stages {
		r, ok := stageMarks[s]
		if !ok {
			r = ' '
		}
		b.WriteRune(r)
	}
	return b.String()
}
