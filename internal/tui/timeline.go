package tui

import (
	"strings"
	"time"
)

// VerdictSpan is a run of points with one verdict, from /api/v1/series.
type VerdictSpan struct {
	From  time.Time `json:"from"`
	To    time.Time `json:"to"`
	Stage string    `json:"stage"`
}

// stageMarks are the verdict timeline's letters, one per tick.
var stageMarks = map[string]rune{
	"balanced": '·', "prefill": 'P', "kv": 'K', "admission": 'A', "decode": 'D', "mixed": 'M', "insufficient": ' ',
}

// markVerdicts sets each point's Verdict from the spans covering it.
func markVerdicts(pts []Point, spans []VerdictSpan) {
	k := 0
	for i := range pts {
		t := pts[i].Time
		for k < len(spans) && spans[k].To.Before(t) {
			k++
		}
		if k < len(spans) && !spans[k].From.After(t) {
			pts[i].Verdict = spans[k].Stage
		}
	}
}

// verdictStrip draws one letter per tick (the newest width of them),
// aligned with the sparklines: P prefill, K KV, A admission, D decode,
// M groups differ, · balanced, blank not enough data or not known.
func verdictStrip(stages []string, width int) string {
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
