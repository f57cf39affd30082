package diagnose_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/sim"
)

// The matrix's shed cells: a prefill-bound group whose queue is capped
// sheds what its prefill cannot take, counted by the engines themselves
// (vLLM's admission rejections, SGLang's queue rejections) or by the router
// in front (llm-d's flow control, Dynamo's overload errors). The verdict
// stays prefill-bound and its headline says how much of the offered load
// was shed; the ledger's shed share is the simulator's.
func TestVerdictNamesShedLoad(t *testing.T) {
	f := func(name string, fl flavour, router string) {
		t.Run(name, func(t *testing.T) {
			g := group(fl, fl.engine, simPrefill, 1, false)
			g.MaxQueued, g.Router = 12, router
			sc := scenario("shed", g)
			if b := sc.LoadModel().Groups[0].Bottleneck; b != simPrefill {
				t.Fatalf("the load model's bottleneck is %s", b)
			}
			pts, model, pool := judgedPoolRun(t, sc, 5, 120*time.Second, 50*time.Second, 10*time.Second, func(at time.Duration, gv diagnose.GroupVerdict) string {
				switch {
				case gv.Class != diagnose.PrefillBound:
					return fmt.Sprintf("at %v: %s (%q), want prefill-bound", at, gv.Class, gv.Evidence)
				case !strings.Contains(gv.Headline, "of offered load shed before the engine"):
					return fmt.Sprintf("at %v: headline %q does not name the shed load (notes %q)", at, gv.Headline, gv.Notes)
				}
				return ""
			})
			// The ledger's share over the run's second half against the
			// simulator's offered and shed requests over the same span.
			half := pts[len(pts)/2:]
			from, to := half[0].Time.Sub(epoch), half[len(half)-1].Time.Sub(epoch)
			a, b := model.ShedTruth(g.Name, int64(from)), model.ShedTruth(g.Name, int64(to))
			if b.Shed-a.Shed < 50 {
				t.Fatalf("too little shed to compare: %+v → %+v", a, b)
			}
			want := float64(b.Shed-a.Shed) / float64(b.Offered-a.Offered)
			var got float64
			n := 0
			for _, p := range half {
				pp, ok := p.Pool(pool)
				if !ok || !pp.Failures.Shed.Ratio.OK() {
					t.Fatalf("at %v: no shed share: %+v", p.Time, pp.Failures.Shed)
				}
				got += pp.Failures.Shed.Ratio.V
				n++
			}
			got /= float64(n)
			t.Logf("truth: %d of %d offered shed (%.3f); ledger %.3f", b.Shed-a.Shed, b.Offered-a.Offered, want, got)
			if math.Abs(got-want) > 0.03 {
				t.Errorf("ledger's shed share %.3f, truth %.3f", got, want)
			}
			if router != "" {
				if rp := pts[len(pts)-1].Router; !rp.Shed.OK() || rp.Shed.V <= 0 {
					t.Errorf("the router's shed %+v, want the router's count", rp.Shed)
				}
			}
		})
	}
	f("vllm-admission", flavours[1], "")
	f("sglang-queue", flavours[2], "")
	f("llm-d-flow-control", flavours[0], sim.RouterEngines[0])
	f("dynamo-overload", flavours[3], sim.RouterEngines[1])
}
