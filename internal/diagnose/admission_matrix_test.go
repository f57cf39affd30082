package diagnose_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/sim"
)

// vllmAdmission sizes a vLLM group whose decode KV slots, held from the
// copy on through decode, run out before its batch, its link or its
// prefill do: four copies at a time of 2 s each per link, a decode of
// 2.6 s, 32 slots and a batch of 32 on one decode engine.
func vllmAdmission(f flavour, dp int) sim.Group {
	g := group(f, f.engine, sim.StageNone, dp, false)
	nD := float64(dp)
	g.Transfer = sim.TransferSpec{BandwidthBytesPerSec: 8 * float64(1<<30), Threads: 16}
	g.Decode = sim.DecodeSpec{Instances: 1, DP: dp, StepTime: 10 * time.Millisecond, MaxBatch: 32, KVSlots: 32}
	hold := float64(sim.LlamaKVBytes)/(g.Transfer.BandwidthBytesPerSec/16) + 257*0.01
	g.Rate = 1.25 * nD * 32 / hold
	g.Prefill.Instances = int(g.Rate/(0.6*g.Prefill.TokensPerSec/8192)/float64(dp)) + 1
	return g
}

// The matrix's KV-admission cells: vLLM with either connector, whose
// decode KV cache, full of requests awaiting their KV, caps the transfers
// in flight. The verdict names decode admission, never the link or decode
// compute, at every checkpoint, where the load model says the slots are
// the limit; with waiting by reason absent (an older vLLM) it does not
// claim it.
func TestVerdictVLLMKVAdmission(t *testing.T) {
	f := func(fl flavour, dp int, byReason bool) {
		t.Run(fmt.Sprintf("%s-dp%d-by-reason-%v", fl.name, dp, byReason), func(t *testing.T) {
			g := vllmAdmission(fl, dp)
			g.NoWaitingByReason = !byReason
			sc := scenario("kv-admission", g)
			if gl := sc.LoadModel().Groups[0]; gl.Bottleneck != sim.StageAdmission {
				t.Fatalf("the load model's bottleneck is %s: %+v", gl.Bottleneck, gl.Stages)
			}
			var wrong []string
			checks := 0
			r := run{sc: sc, seed: 3, duration: 110 * time.Second, warmUp: 50 * time.Second, every: 10 * time.Second}
			r.check = func(cp checkpoint) {
				checks++
				gv, err := groupVerdict(cp.verdict, fl.engine)
				switch {
				case err != nil:
					wrong = append(wrong, err.Error())
				case !byReason:
					// Without the split, decode's waiting cannot say which
					// requests await their KV: no admission claim.
					if gv.Class == diagnose.AdmissionBound {
						wrong = append(wrong, fmt.Sprintf("at %v: admission claimed without waiting by reason: %q", cp.at, gv.Evidence))
					}
				case gv.Class != diagnose.AdmissionBound:
					wrong = append(wrong, fmt.Sprintf("at %v: %s %q, want admission", cp.at, gv.Class, gv.Evidence))
				case !strings.Contains(strings.Join(gv.Evidence, " | "), "while their KV arrives (deferred)"):
					wrong = append(wrong, fmt.Sprintf("at %v: evidence %q does not name the deferred requests", cp.at, gv.Evidence))
				}
			}
			if err := r.do(); err != nil {
				t.Fatal(err)
			}
			if checks == 0 || len(wrong) > 0 {
				t.Errorf("%d of %d checkpoints wrong:\n%s", len(wrong), checks, strings.Join(wrong, "\n"))
			}
		})
	}
	f(flavours[0], 1, true) // vllm-flagcx
	f(flavours[1], 1, true) // vllm-nixl
	f(flavours[1], 2, true)
	f(flavours[1], 1, false)
}
