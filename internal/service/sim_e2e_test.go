package service

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/kvsize"
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
		t.Skip("runs for 13 s of real time")
	}
	// Each scenario runs a simulated cluster and a collector for 13 s of
	// real time, mostly waiting (about 1 s of CPU under the race detector):
	// all start at once, then each is checked in turn.
	type running struct {
		cl *sim.Cluster
		rs *runningService
	}
	var runs []running
	for _, name := range sim.ScenarioNames() {
		sc, err := sim.LoadScenario(name)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		cl, err := sim.Start(ctx, sc, sim.Options{Seed: 7})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Cleanup(func() { cl.Close() })
		cfg := &config.Config{Interval: config.Duration{Duration: time.Second}, Window: config.Duration{Duration: 10 * time.Second}}
		for _, tg := range cl.Targets() {
			cfg.Targets = append(cfg.Targets, config.TargetFrom(tg, ""))
		}
		runs = append(runs, running{cl, startService(t, cfg, kvsize.Request{Bytes: cl.BytesPerRequest(), Basis: "simulator"})})
	}
	for i, name := range sim.ScenarioNames() {
		cl, rs := runs[i].cl, runs[i].rs
		t.Run(name, func(t *testing.T) {
			var snap struct {
				Point struct {
					Instances []instanceJSON `json:"instances"`
				} `json:"point"`
			}
			// Wait until all but two instances (a flaky or restarting one may
			// be down right now) have a full window: the 10 samples 1 s apart
			// a 10 s window holds span about 9 s.
			full := 10*time.Second - 3*time.Second/2
			eventually(t, 40*time.Second, func() string {
				getJSON(t, rs.base+"/api/v1/snapshot", &snap)
				n := 0
				for _, ip := range snap.Point.Instances {
					// Windows are compared from 3 s into the cluster's life, as
					// after the fixed 13 s wait this replaces: a window that started
					// in its first seconds was once seen 4 requests off its truth.
					if ip.Window != nil && ip.WindowTo.Sub(ip.WindowFrom) >= full && ip.WindowFrom.Sub(cl.Started()) >= 3*time.Second {
						n++
					}
				}
				if n < len(cl.Targets())-2 {
					return fmt.Sprintf("%d of %d instances have a full window", n, len(cl.Targets()))
				}
				return ""
			})
			compared := 0
			var obsSum, trueSum [2]float64 // completions (all stages), KV bytes
			// A stamp is the midpoint of its exchange, not the instant the
			// simulator rendered the counters, which lies inside the exchange:
			// at most half the scrape timeout (4/5 of the 1 s interval) away.
			// What the simulator counted that close to a window's edges may
			// fall on either side of it; a prefill batch completes at one
			// instant, so that can be several requests. slack sums that bound.
			const near = 400 * time.Millisecond
			var slack [2]float64
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
				// nearEdges counts what the simulator completed (and the bytes
				// it moved) within near of either edge of the window.
				nearEdges := func() (done_, bytes float64) {
					for _, at := range []time.Time{ip.WindowFrom, ip.WindowTo} {
						a, b := truthOf(cl.TruthAt(at.Add(-near)), ip.Target), truthOf(cl.TruthAt(at.Add(near)), ip.Target)
						done_ += done(b.Counts) - done(a.Counts)
						bytes += float64(b.KVBytes - a.KVBytes)
					}
					return done_, bytes
				}
				edgeDone, edgeBytes := nearEdges()
				want := (done(to.Counts) - done(from.Counts)) / dt
				tol := max(1, edgeDone) / dt
				if math.Abs(*ip.Window-want) > 0.01*want+tol {
					t.Errorf("%s: %.3f req/s, truth %.3f over %.2f s (%.0f completions within %v of its edges)", ip.Target, *ip.Window, want, dt, edgeDone, near)
				}
				obsSum[0] += *ip.Window
				trueSum[0] += want
				slack[0] += tol
				if ip.KVBytesW != nil {
					wantKV := float64(to.KVBytes-from.KVBytes) / dt
					obsSum[1] += *ip.KVBytesW
					trueSum[1] += wantKV
					slack[1] += max(float64(cl.BytesPerRequest()), edgeBytes) / dt
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
				if math.Abs(obsSum[i]-trueSum[i]) > 0.01*trueSum[i]+slack[i] {
					t.Errorf("%s: ptdmon %.4g/s, truth %.4g/s (more than 1%% + %.3g/s apart)", what, obsSum[i], trueSum[i], slack[i])
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
