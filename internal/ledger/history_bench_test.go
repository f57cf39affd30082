package ledger_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// fleet is a ledger fed 1 s scrapes of n vLLM-like instances (half prefill,
// half decode): completions, KV bytes, tokens and the usual gauges, so every
// instance-point holds present values and the absent SGLang queues.
type fleet struct {
	l     *ledger.Ledger
	names []string
	obs   []engine.Observation
	sec   int
}

var benchStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newFleet(n int) *fleet {
	f := &fleet{l: ledger.New(ledger.Config{Interval: time.Second, Window: 5 * time.Second, KVRequest: kvsize.Request{Bytes: 1 << 30}})}
	var infos []engine.Target
	for i := 0; i < n; i++ {
		role, name := engine.Prefill, fmt.Sprintf("p%d", i)
		if i%2 == 1 {
			role, name = engine.Decode, fmt.Sprintf("d%d", i)
		}
		infos = append(infos, engine.Target{Name: name, Role: role, Engine: engine.VLLM})
		f.names = append(f.names, name)
		o := engine.Observation{Engine: engine.VLLM, Role: role, Model: "m"}
		for j, m := range []engine.Metric{engine.Completed, engine.KVBytes, engine.PromptTokens, engine.GenerationTokens} {
			o.Counters = append(o.Counters, engine.CounterValue{Metric: m, Series: uint64(j + 1)})
		}
		for _, m := range []engine.Metric{engine.Running, engine.Waiting, engine.KVUsage} {
			o.HasGauges[m.GaugeIndex()] = true
		}
		f.obs = append(f.obs, o)
	}
	f.l.SetTargets(infos)
	return f
}

// step records one scrape of every instance and ticks.
func (f *fleet) step() ledger.Point {
	now := benchStart.Add(time.Duration(f.sec) * time.Second)
	for i := range f.obs {
		o := &f.obs[i]
		k := float64(f.sec * (i%7 + 1))
		o.Counters[0].Value = 2 * k
		o.Counters[1].Value = k * (1 << 28)
		o.Counters[2].Value = 1000 * k
		o.Counters[3].Value = 100 * k
		o.Gauges[engine.Running.GaugeIndex()] = float64(i % 9)
		o.Gauges[engine.Waiting.GaugeIndex()] = float64(f.sec % 5)
		o.Gauges[engine.KVUsage.GaugeIndex()] = float64(i%10) / 10
		f.l.Record(ledger.Scrape{Target: f.names[i], Time: now.Add(-300 * time.Millisecond), Obs: o})
	}
	f.sec++
	return f.l.Tick(now)
}

func (f *fleet) fill(ticks int) {
	for i := 0; i < ticks; i++ {
		f.step()
	}
}

// BenchmarkHistoryAppend is one second of a fleet: every instance's scrape
// recorded, then the tick that computes the point and appends it to a
// history already full (the oldest point leaves as the new one comes).
func BenchmarkHistoryAppend(b *testing.B) {
	for _, c := range []struct{ n, fill int }{{200, 3700}, {5000, 250}} {
		b.Run(fmt.Sprint(c.n), func(b *testing.B) {
			f := newFleet(c.n)
			f.fill(c.fill)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				f.step()
			}
		})
	}
}

// BenchmarkHistoryRead reads a window of the newest 60 points (Since) and
// the whole hour (Range, as /api/v1/series pages it) of 200 instances.
func BenchmarkHistoryRead(b *testing.B) {
	f := newFleet(200)
	f.fill(3700)
	newest, _ := f.l.Latest()
	b.Run("since60", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if pts := f.l.Since(newest.Time.Add(-60 * time.Second)); len(pts) != 60 || len(pts[0].Instances) != 200 {
				b.Fatalf("%d points", len(pts))
			}
		}
	})
	b.Run("range60", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if pts, _ := f.l.Range(newest.Time.Add(-60*time.Second), 3600); len(pts) != 60 {
				b.Fatalf("%d points", len(pts))
			}
		}
	})
	b.Run("range3600", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if pts, _ := f.l.Range(time.Time{}, 3600); len(pts) != 3600 {
				b.Fatalf("%d points", len(pts))
			}
		}
	})
}

// BenchmarkHistoryVerdict reads the verdict's window from the history and
// computes the verdict over it, as the API does for each new point.
func BenchmarkHistoryVerdict(b *testing.B) {
	f := newFleet(200)
	f.fill(3700)
	newest, _ := f.l.Latest()
	cfg := diagnose.Config{}.ForRates(f.l.Config().Window)
	from := newest.Time.Add(-cfg.Lookback(time.Second))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if v := diagnose.Diagnose(f.l.Since(from), cfg); v.At.IsZero() {
			b.Fatal("no verdict")
		}
	}
}
