package service

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/sim"
)

type instanceJSON struct {
	Target     string    `json:"target"`
	Role       string    `json:"role"`
	Up         bool      `json:"up"`
	Window     *float64  `json:"requests_per_second_window"`
	KVBytesW   *float64  `json:"kv_bytes_per_second_window"`
	WindowFrom time.Time `json:"window_from"`
	WindowTo   time.Time `json:"window_to"`
}

// TestSimulatorScenariosAgreeWithTruth runs the collector against the
// simulated cluster of every scenario and compares each instance's windowed
// rate with the simulator's exact counts at the same instants.
func TestSimulatorScenariosAgreeWithTruth(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for 14 s of real time")
	}
	// Each scenario runs a simulated cluster and a collector for 14 s of
	// real time; a few at once keep two cores from starving their scrapes.
	slots := make(chan struct{}, 3)
	for _, name := range sim.ScenarioNames() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			slots <- struct{}{}
			defer func() { <-slots }()
			sc, err := sim.LoadScenario(name)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cl, err := sim.Start(ctx, sc, sim.Options{Seed: 7})
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			cfg := &config.Config{Interval: config.Duration{Duration: time.Second}, Window: config.Duration{Duration: 10 * time.Second}}
			for _, tg := range cl.Targets() {
				cfg.Targets = append(cfg.Targets, config.TargetFrom(tg, ""))
			}
			rs := startService(t, cfg, ledger.KVRequest{Bytes: float64(cl.BytesPerRequest()), Source: "simulator"})
			time.Sleep(13 * time.Second)

			var snap struct {
				Point struct {
					Instances []instanceJSON `json:"instances"`
				} `json:"point"`
			}
			getJSON(t, rs.base+"/api/v1/snapshot", &snap)
			compared := 0
			var obsSum, trueSum [2]float64 // completions (all stages), KV bytes
			for _, ip := range snap.Point.Instances {
				if ip.Window == nil || ip.WindowFrom.IsZero() {
					continue // down or flaky right now: absent, nothing to compare
				}
				from, to := truthOf(cl.TruthAt(ip.WindowFrom), ip.Target), truthOf(cl.TruthAt(ip.WindowTo), ip.Target)
				if from.Restarts != to.Restarts {
					continue // the restart itself: increments before it are lost, as in Prometheus
				}
				dt := ip.WindowTo.Sub(ip.WindowFrom).Seconds()
				done := func(c sim.Counts) float64 {
					if ip.Role == "prefill" {
						return float64(c.PrefillCompleted)
					}
					return float64(c.DecodeCompleted)
				}
				want := (done(to.Counts) - done(from.Counts)) / dt
				if math.Abs(*ip.Window-want) > 0.01*want+1.0/dt {
					t.Errorf("%s: %.3f req/s, truth %.3f over %.2f s", ip.Target, *ip.Window, want, dt)
				}
				obsSum[0] += *ip.Window
				trueSum[0] += want
				if ip.KVBytesW != nil {
					wantKV := float64(to.KVBytes-from.KVBytes) / dt
					obsSum[1] += *ip.KVBytesW
					trueSum[1] += wantKV
				}
				compared++
			}
			if compared < len(cl.Targets())-2 {
				t.Errorf("compared only %d of %d instances", compared, len(cl.Targets()))
			}
			for i, what := range []string{"completions", "KV bytes"} {
				if trueSum[i] == 0 {
					if i == 0 {
						t.Errorf("no %s in 10 s", what)
					}
					continue
				}
				if math.Abs(obsSum[i]-trueSum[i]) > 0.01*trueSum[i] {
					t.Errorf("%s: ptdmon %.4g/s, truth %.4g/s (more than 1%% apart)", what, obsSum[i], trueSum[i])
				} else {
					t.Logf("%s: ptdmon %.4g/s, truth %.4g/s (%+.3f%%)", what, obsSum[i], trueSum[i], (obsSum[i]-trueSum[i])/trueSum[i]*100)
				}
			}
		})
	}
}

func truthOf(tr sim.Truth, name string) sim.InstanceTruth {
	for _, in := range tr.Instances {
		if in.Name == name {
			return in
		}
	}
	return sim.InstanceTruth{}
}
