package diagnose_test

import (
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// TensorRT-LLM on Prometheus alone, its targets without a
// ptd_max_num_seqs label (the harness gives none): decode's batch limit is
// the one the engine exports, trtllm_max_num_active_requests, the
// simulator's limit added over the decode instances, with its basis.
func TestTRTLLMBatchLimitFromTheEngine(t *testing.T) {
	fl := flavours[3] // trtllm, Prometheus text
	g := group(fl, fl.engine, simDecode, 2, false)
	pts, model, pool := poolRun(t, scenario("trtllm-limit", g), 19, 40*time.Second)
	want := 0
	for _, in := range model.Instances() {
		want += model.MaxNumSeqs(in.Name)
	}
	if want == 0 {
		t.Fatal("the simulator gives no decode batch limit")
	}
	checked := 0
	for _, p := range pts[len(pts)/2:] {
		pp, ok := p.Pool(pool)
		if !ok {
			t.Fatalf("at %v: no pool %q", p.Time, pool)
		}
		b := pp.Decode.Batch
		switch {
		case b == nil:
			t.Fatalf("at %v: no decode batch", p.Time)
		case !b.Limit.OK() || b.Limit.V != float64(want) || b.LimitBasis != ledger.BasisEngineLimit:
			t.Fatalf("at %v: decode batch limit %+v (basis %q), want %d from the engine's limit", p.Time, b.Limit, b.LimitBasis, want)
		}
		checked++
	}
	t.Logf("decode batch limit %d (%s) at %d points", want, ledger.BasisEngineLimit, checked)
}
