package journey

import (
	"math"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestExtractOutOfRangeDurations: a duration attribute that is no number
// of seconds a time.Duration holds (an infinity, 1e300 s) is unknown, as a
// negative or NaN one is, rather than a wrapped-around time.
func TestExtractOutOfRangeDurations(t *testing.T) {
	f := func(name string, v float64, want float64) {
		t.Helper()
		td := ptrace.NewTraces()
		s := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		s.SetName(SpanLLMRequest)
		s.Attributes().PutDouble(AttrTTFT, v)
		b := Extract(td)
		if len(b.Legs) != 1 {
			t.Fatalf("%s: %d legs, want 1", name, len(b.Legs))
		}
		if got := b.Legs[0].TTFT; got != want {
			t.Errorf("%s: TTFT %v, want %v", name, got, want)
		}
	}
	f("+Inf", math.Inf(1), -1)
	f("1e300 s", 1e300, -1)
	f("NaN", math.NaN(), -1)
	f("negative", -0.5, -1)
	f("a day", 86400, 86400)
	f("zero", 0, 0)
}
