package diagnose_test

import (
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/sim"
)

// BenchmarkDiagnose is one verdict over two windows (60 points) of the
// built-in trtllm deployment's ledger (vLLM and TensorRT-LLM groups, 6
// instances): what the API pays per tick, and per point of the verdict
// timeline the first time it is asked for.
func BenchmarkDiagnose(b *testing.B) {
	sc, err := sim.LoadScenario("trtllm")
	if err != nil {
		b.Fatal(err)
	}
	var pts []ledger.Point
	if err := (run{sc: sc, seed: 1, duration: 90 * time.Second, keep: &pts}).do(); err != nil {
		b.Fatal(err)
	}
	pts = pts[len(pts)-60:]
	cfg := diagnose.Config{BytesPerRequest: float64(sc.KVBytesPerRequest)}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if v := diagnose.Diagnose(pts, cfg); v.Stage == diagnose.Insufficient {
			b.Fatal(v.Evidence)
		}
	}
}
