package advice

import (
	"math"
	"testing"

	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/slo"
)

// TestAttainmentAbsences: a role with no instance up, an SLO whose
// histogram no instance exports, and no phase histogram at all are each
// absent with their reason; what is there is still computed.
func TestAttainmentAbsences(t *testing.T) {
	inf := math.Inf(1)
	e2e := slo.Hist{Bounds: []float64{1, 10, inf}, Counts: []float64{2, 6, 8}, Count: 8}
	b := ledger.Buckets{Seconds: 5, Decode: ledger.RoleBuckets{Up: 2, E2E: []slo.Hist{e2e}, E2ERate: 2}}
	r, err := Attainment(slo.Thresholds{ITL: 0.05, E2E: 10}, b)
	if err != nil {
		t.Fatal(err)
	}
	if r.Prefill != nil || r.Absent["prefill"] != "no prefill instance up" {
		t.Errorf("prefill: %+v %v", r.Prefill, r.Absent)
	}
	if r.Absent["misses"] == "" || r.Decode == nil || r.Decode.Misses != nil {
		t.Errorf("misses: %v %+v", r.Absent, r.Decode)
	}
	d := r.Decode
	if len(d.Metrics) != 2 || d.Metrics[0].Absent != "no decode instance exports the ITL histogram" || d.Metrics[0].Within != nil {
		t.Fatalf("itl: %+v", d.Metrics)
	}
	if w := d.Metrics[1].Within; w == nil || w.Fraction != 0.75 || !w.Exact {
		t.Errorf("e2e: %+v", d.Metrics[1])
	}
	if d.Absent == "" || d.Goodput != 0 || d.Rate != 2 {
		t.Errorf("goodput should be absent with an SLO absent: %+v", d)
	}
	if _, err := Attainment(slo.Thresholds{}, b); err == nil {
		t.Error("no threshold: want an error")
	}
}
