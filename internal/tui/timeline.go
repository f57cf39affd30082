package tui

import (
	"strings"

	"github.com/ptdmon/ptdmon/internal/api"
	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// classMarks are the verdict timeline's letters, one per tick.
var classMarks = map[diagnose.Class]rune{
	diagnose.Balanced: '·', diagnose.PrefillBound: 'P', diagnose.KVBound: 'K', diagnose.AdmissionBound: 'A',
	diagnose.DecodeBound: 'D', diagnose.Mixed: 'M', diagnose.Insufficient: ' ',
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
			out[i].Verdict = spans[k].Class
		}
	}
	return out
}

// verdictStrip draws one letter per tick (the newest width of them),
// aligned with the sparklines: P prefill, K KV, A admission, D decode,
// M groups differ, · balanced, blank not enough data or not known.
func verdictStrip(classes []diagnose.Class, width int) string {
	if len(classes) > width {
		classes = classes[len(classes)-width:]
	}
	var b strings.Builder
	for _, c := range classes {
		r, ok := classMarks[c]
		if !ok {
			r = ' '
		}
		b.WriteRune(r)
	}
	return b.String()
}
