package diagnose_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/sim"
)

// The routers' own time against the simulator's: a group behind llm-d's
// EPP or Dynamo's frontend whose requests wait 0.15 s in the router
// (exponential) before dispatch. The pool's router phase is the true wait,
// and its TTFT the true TTFT the clients saw: llm-d's, which times no
// TTFT, the router phase added to the engines' legs; Dynamo's, its
// frontend's TTFT. The engines' phases start at the dispatch, so the
// phases still add up to the TTFT.
func TestRouterPhaseMatchesSimulatorTruth(t *testing.T) {
	f := func(name string, fl flavour, router, source string) {
		t.Run(name, func(t *testing.T) {
			g := group(fl, fl.engine, sim.StageNone, 1, false)
			g.Router, g.RouterDelay = router, 0.15
			pts, model, pool := poolRun(t, scenario("router-phase", g), 13, 120*time.Second)
			truth := model.PhaseTruth(fl.engine)
			if truth.Requests < 200 {
				t.Fatalf("too few requests: %+v", truth)
			}
			wantRouter := truth.Router / float64(truth.Requests)
			ttft, _ := model.RequestTruth(fl.engine)
			from := pts[len(pts)/3].Time.Sub(epoch)
			var wantTTFT float64
			n := 0
			for _, l := range ttft {
				if l.At >= from {
					wantTTFT += l.Seconds
					n++
				}
			}
			wantTTFT /= float64(n)

			var router, tt, untimed float64
			k := 0
			var wrong []string
			for _, p := range pts[len(pts)/3:] {
				pp, ok := p.Pool(pool)
				if !ok {
					t.Fatalf("at %v: no pool %q", p.Time, pool)
				}
				ph := pp.Phases
				if !ph.Router.OK() || !ph.TTFT.OK() {
					continue // a window without a completed request
				}
				if ph.TTFTSource != source {
					wrong = append(wrong, fmt.Sprintf("at %v: TTFT from %q, want %q", p.Time, ph.TTFTSource, source))
				}
				router += ph.Router.V
				tt += ph.TTFT.V
				// TTFT less every phase there, signed: Untimed is absent
				// where a window's phases, of other requests than its
				// TTFT's, add up to more.
				rest := ph.TTFT.V
				for i := range ledger.PhaseNames {
					if v := ph.Phase(i); v.OK() {
						rest -= v.V
					}
				}
				untimed += rest
				k++
			}
			if k < len(pts)/2 {
				t.Fatalf("only %d of %d points have a router phase and a TTFT", k, len(pts)*2/3)
			}
			if len(wrong) > 0 {
				t.Errorf("%d points wrong:\n%s", len(wrong), strings.Join(wrong[:min(len(wrong), 5)], "\n"))
			}
			router, tt, untimed = router/float64(k), tt/float64(k), untimed/float64(k)
			t.Logf("router phase: ledger %.4f s, truth %.4f s; TTFT (%s): ledger %.4f s, truth %.4f s; TTFT less the phases %.4f s",
				router, wantRouter, source, tt, wantTTFT, untimed)
			if math.Abs(router-wantRouter) > 0.1*wantRouter {
				t.Errorf("router phase: ledger %.4f s, truth %.4f s", router, wantRouter)
			}
			if math.Abs(tt-wantTTFT) > 0.05*wantTTFT {
				t.Errorf("TTFT: ledger %.4f s, truth %.4f s", tt, wantTTFT)
			}
			// The engines' phases start at the dispatch and the router's
			// ends there: what no phase covers is small beside the
			// router's wait.
			if math.Abs(untimed) > 0.25*wantRouter {
				t.Errorf("TTFT less the phases %.4f s of a TTFT of %.4f s: the phases miss the router's %.4f s", untimed, tt, wantRouter)
			}
		})
	}
	f("llm-d-epp/vllm-nixl", flavours[1], string(engine.LLMDEPP), "router phase + prefill leg + decode leg")
	f("dynamo-frontend/vllm-nixl", flavours[1], string(engine.DynamoFrontend), "router")
	f("llm-d-epp/sglang", flavours[2], string(engine.LLMDEPP), "router phase + decode from arrival")
}
