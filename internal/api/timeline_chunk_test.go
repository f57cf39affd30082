package api

import (
	"reflect"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/sim/simtest"
)

// TestTimelineReadsInChunks checks that the verdict timeline is the same
// whether the ledger's points are read all at once or a few at a time, for
// every point uncached and for a cache warm on some points only.
func TestTimelineReadsInChunks(t *testing.T) {
	defer func(n int) { timelineChunk = n }(timelineChunk)
	for _, name := range []string{"decode-bound", "restart", "flaky"} {
		sc, err := sim.LoadScenario(name)
		if err != nil {
			t.Fatal(err)
		}
		l, _, _, err := simtest.Run(sc, 1, 240*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		pts := l.Since(time.Time{})
		timeline := func(chunk int, warm bool) []VerdictSpan {
			timelineChunk = chunk
			s := &Server{Ledger: l}
			if warm {
				s.timeline(pts[40:60])
			}
			return s.timeline(pts)
		}
		want := timeline(1<<30, false)
		if len(want) < 2 {
			t.Fatalf("%s: %d spans; the test needs verdicts that change", name, len(want))
		}
		for _, chunk := range []int{1, 7, 64} {
			for _, warm := range []bool{false, true} {
				if got := timeline(chunk, warm); !reflect.DeepEqual(got, want) {
					t.Errorf("%s, %d points at a time (warm %v): %d spans %+v, want %d %+v", name, chunk, warm, len(got), got, len(want), want)
				}
			}
		}
	}
}
