package service

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/sim"
)

// The simulated vLLM and SGLang engines publish forward-pass metrics over
// ZeroMQ; ptdmon subscribes beside each scrape. Prefill's busy instances
// are then the engines' own busy time over each instance's window, to
// within the simulator's 50 ms tick at the window's edges. One decode
// instance lists an endpoint nobody publishes on: its busy time falls back
// to the engine's other signals, and its target says why.
func TestForwardPassBusyTime(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for 14 s of real time")
	}
	t.Parallel()
	sc, err := sim.LoadScenario("balanced")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cl, err := sim.Start(ctx, sc, sim.Options{Seed: 3, ForwardPassMetrics: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	cfg := &config.Config{Interval: config.Duration{Duration: time.Second}, Window: config.Duration{Duration: 10 * time.Second}}
	deaf := ""
	for _, tg := range cl.Targets() {
		if len(tg.ForwardPassMetrics) == 0 {
			t.Fatalf("%s publishes no forward-pass metrics", tg.Name)
		}
		if tg.Role == "decode" && deaf == "" {
			deaf, tg.ForwardPassMetrics = tg.Name, []string{"tcp://127.0.0.1:1"}
		}
		cfg.Targets = append(cfg.Targets, config.TargetFrom(tg, ""))
	}
	rs := startService(t, cfg, kvsize.Request{Bytes: cl.BytesPerRequest(), Basis: "simulator"})

	type stageBusy struct {
		Busy  *float64 `json:"busy_instances"`
		Basis string   `json:"busy_basis"`
	}
	var snap struct {
		Point struct {
			Prefill   stageBusy      `json:"prefill"`
			Decode    stageBusy      `json:"decode"`
			Instances []instanceJSON `json:"instances"`
		} `json:"point"`
	}
	full := 10*time.Second - 3*time.Second/2
	eventually(t, 40*time.Second, func() string {
		getJSON(t, rs.base+"/api/v1/snapshot", &snap)
		if snap.Point.Prefill.Basis != "forward_pass" {
			return fmt.Sprintf("prefill busy basis %q", snap.Point.Prefill.Basis)
		}
		for _, ip := range snap.Point.Instances {
			if ip.Window == nil || ip.WindowTo.Sub(ip.WindowFrom) < full || ip.WindowFrom.Sub(cl.Started()) < 2*time.Second {
				return ip.Target + " has no full window yet"
			}
		}
		return ""
	})
	var got, want float64
	for _, ip := range snap.Point.Instances {
		if ip.Role != "prefill" {
			continue
		}
		from, to := truthOf(cl.TruthAt(ip.WindowFrom), ip.Target), truthOf(cl.TruthAt(ip.WindowTo), ip.Target)
		want += (to.BusySeconds - from.BusySeconds) / ip.WindowTo.Sub(ip.WindowFrom).Seconds() / float64(to.Engines)
	}
	got = *snap.Point.Prefill.Busy
	// Each edge may miss one 50 ms tick of each engine's work: 0.1 s of a
	// 9 s window per instance.
	if n := float64(sc.Groups[0].Prefill.Instances); math.Abs(got-want) > 0.012*n+0.01 || want < 0.1 {
		t.Errorf("prefill busy instances %.4f, truth %.4f", got, want)
	}
	t.Logf("prefill busy instances %.4f, truth %.4f", got, want)

	if b := snap.Point.Decode.Basis; b == "forward_pass" || b == "" {
		t.Errorf("decode busy basis %q with %s's forward-pass endpoint dead", b, deaf)
	}
	var targets []struct {
		Name  string   `json:"name"`
		Notes []string `json:"notes"`
	}
	getJSON(t, rs.base+"/api/v1/targets", &targets)
	for _, tg := range targets {
		if tg.Name == deaf && !strings.Contains(strings.Join(tg.Notes, ";"), "forward-pass metrics: tcp://127.0.0.1:1: dial") {
			t.Errorf("%s's notes %q do not say why its busy time is not the forward passes'", deaf, tg.Notes)
		}
	}
}
