package reqtrace_test

import (
	"math"
	"testing"

	"github.com/ptdmon/ptdmon/internal/trtllm/reqtrace"
	"github.com/ptdmon/ptdmon/internal/trtllm/reqtrace/reqtracetest"
)

// FuzzRequestsParseLine: no input panics the parser or the span math, and whatever
// parses never yields a negative or non-finite span.
func FuzzRequestsParseLine(f *testing.F) {
	tl := reqtracetest.Timelines(2, 1, base)
	for _, s := range []string{
		workerA, workerBC, tl[0].DisaggA(offs), tl[0].DisaggB(offs), tl[1].DisaggC(offs, false),
		`[` + workerA + `,` + workerA + `]`, `{}`, `[]`, `null`, `{"request_id":"x","perf_metrics":null}`,
		`{"ctx_perf_metrics":{"perf_metrics":{"timing_metrics":{"arrival_time":1e308,"last_token_time":-1e308}}}}`,
	} {
		f.Add([]byte(s))
	}
	cs, err := reqtrace.ParseClockSync(probes())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		recs, err := reqtrace.ParseLine(line, reqtrace.Pos{File: "fuzz", Line: 1})
		if err != nil {
			return
		}
		for _, r := range recs {
			q := reqtrace.Compute(r, cs, reqtrace.Usage{r.ID: {CompletionTokens: 3}})
			for s, v := range q.Spans {
				if v.OK && (v.Seconds < 0 || math.IsNaN(v.Seconds) || math.IsInf(v.Seconds, 0)) {
					t.Fatalf("%s = %v from %q", reqtrace.Span(s), v.Seconds, line)
				}
			}
		}
	})
}
