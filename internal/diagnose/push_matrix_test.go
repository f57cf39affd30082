package diagnose_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/sim"
)

// NIXL in push (WRITE) mode counts its transfers on the prefill side that
// writes them, not on decode: the KV stage's bytes are the simulator's
// whichever side counts, they show on the prefill instances, and the
// verdict is the one the load model gives, KV-bound and balanced alike.
func TestVerdictNIXLPushMode(t *testing.T) {
	f := func(stage string, want diagnose.Class) {
		t.Run(stage, func(t *testing.T) {
			g := group(flavours[1], flavours[1].engine, stage, 1, false)
			g.NIXLPush = true
			sc := scenario("nixl-push", g)
			var pts []ledger.Point
			var model *sim.Model
			var wrong []string
			r := run{sc: sc, seed: 9, duration: 100 * time.Second, warmUp: 50 * time.Second, every: 10 * time.Second, keep: &pts, model: &model}
			r.check = func(cp checkpoint) {
				gv, err := groupVerdict(cp.verdict, flavours[1].engine)
				if err != nil || gv.Class != want {
					wrong = append(wrong, fmt.Sprintf("at %v: %+v %v", cp.at, gv.Class, err))
				}
			}
			if err := r.do(); err != nil {
				t.Fatal(err)
			}
			if len(wrong) > 0 {
				t.Errorf("want %s:\n%v", want, wrong)
			}
			last := pts[len(pts)-1]
			prefillBytes, decodeBytes := 0.0, 0.0
			for _, ip := range last.Instances {
				if !ip.KVBytesW.OK() {
					continue
				}
				if ip.Role == "prefill" {
					prefillBytes += ip.KVBytesW.V
				} else {
					decodeBytes += ip.KVBytesW.V
				}
			}
			if prefillBytes <= 0 || decodeBytes != 0 {
				t.Errorf("KV bytes/s on prefill %g, on decode %g: push mode counts on prefill only", prefillBytes, decodeBytes)
			}
			// The run's KV bytes against the truth's, over the newest 5 s.
			end := 100 * time.Second
			a, b := model.TruthAt(end-5*time.Second).Totals, model.TruthAt(end).Totals
			want := float64(b.KVBytes-a.KVBytes) / 5
			if math.Abs(last.KV.BytesWindow.V-want) > 0.25*want {
				t.Errorf("KV bytes/s %v, truth %g", last.KV.BytesWindow, want)
			}
		})
	}
	f(sim.StageNone, diagnose.Balanced)
	f(simKV, diagnose.KVBound)
}
