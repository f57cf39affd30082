package diagnose_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/kvsize"
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
	cfg := diagnose.Config{}
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
	cfg := diagnose.Config{}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if v := diagnose.Diagnose(pts, cfg); v.Class == diagnose.Insufficient {
			b.Fatal(v.Evidence)
		}
	}
}

// points200 is a minute and a half of ticks of one vLLM pool of 100
// prefill and 100 decode instances, after its first half minute, with the
// pool's own B_request: the fleet of docs/performance.md's recording
// figures.
func points200(b *testing.B) []ledger.Point {
	b.Helper()
	sc, err := sim.LoadScenario("balanced")
	if err != nil {
		b.Fatal(err)
	}
	g := sc.Groups[0]
	g.Prefill.Instances, g.Decode.Instances = 100, 100
	g.Rate *= 50
	sc.Groups = []sim.Group{g}
	own := map[string]kvsize.Request{sc.Model: {Bytes: sc.KVBytesPerRequest}}
	var pts []ledger.Point
	r := run{sc: sc, seed: 1, duration: 120 * time.Second, keep: &pts, pools: own}
	if err := r.do(); err != nil {
		b.Fatal(err)
	}
	return pts[30:]
}

// BenchmarkTick200 is the verdict of one tick as the recorder takes it at
// 200 instances: the tick's point joins the last two windows and an
// interval of points (61), and the verdict is computed over them.
func BenchmarkTick200(b *testing.B) {
	src := points200(b)
	cfg := diagnose.Config{}.ForRates(5 * time.Second)
	keep := cfg.Lookback(time.Second)
	feed := func(b *testing.B, tick func(p ledger.Point) diagnose.Verdict) {
		at := src[len(src)-1].Time
		next := func(i int) ledger.Point {
			p := src[i%len(src)]
			p.Time = at.Add(time.Duration(i) * time.Second)
			return p
		}
		for i := 0; i < 61; i++ {
			tick(next(i))
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if v := tick(next(61 + i)); v.Class == diagnose.Insufficient {
				b.Fatal(v.Evidence)
			}
		}
	}
	b.Run("Diagnose", func(b *testing.B) {
		var recent []ledger.Point
		feed(b, func(p ledger.Point) diagnose.Verdict {
			recent = append(recent, p)
			cut := 0
			for cut < len(recent) && !recent[cut].Time.After(p.Time.Add(-keep)) {
				cut++
			}
			recent = append(recent[:0], recent[cut:]...)
			return diagnose.Diagnose(recent, cfg)
		})
	})
}
