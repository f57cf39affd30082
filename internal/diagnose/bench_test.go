package diagnose_test

import (
	"fmt"
	"slices"
	"strings"
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
		if v := diagnose.Diagnose(pts, cfg); v.Class == diagnose.Insufficient {
			b.Fatal(v.Evidence)
		}
	}
}

// BenchmarkDiagnose5000 is the same verdict with every instance of those
// points repeated to 5,000 instances (targets listed group by group, as a
// configuration usually lists them): the fleet-size cost of a tick's
// verdict and of each point of the timeline.
func BenchmarkDiagnose5000(b *testing.B) {
	sc, err := sim.LoadScenario("trtllm")
	if err != nil {
		b.Fatal(err)
	}
	var pts []ledger.Point
	if err := (run{sc: sc, seed: 1, duration: 90 * time.Second, keep: &pts}).do(); err != nil {
		b.Fatal(err)
	}
	pts = pts[len(pts)-60:]
	for i := range pts {
		own := pts[i].Instances
		big := make([]ledger.InstancePoint, 0, 5000)
		for len(big) < 5000 {
			for _, ip := range own {
				ip.Target = fmt.Sprintf("%s-%d", ip.Target, len(big))
				big = append(big, ip)
			}
		}
		slices.SortStableFunc(big, func(x, y ledger.InstancePoint) int { return strings.Compare(x.Engine, y.Engine) })
		pts[i].Instances = big
	}
	cfg := diagnose.Config{BytesPerRequest: float64(sc.KVBytesPerRequest)}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if v := diagnose.Diagnose(pts, cfg); v.Class == diagnose.Insufficient {
			b.Fatal(v.Evidence)
		}
	}
}
