package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/gen"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/service"
	"github.com/ptdmon/ptdmon/internal/sim"
)

// needBin finds an external program. Outside CI a missing one skips the
// test with the package to install; under CI it fails.
func needBin(t *testing.T, name, debPkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not found but CI is set (apt-get install -y %s): %v", name, debPkg, err)
		}
		t.Skipf("%s not installed (Debian package %s)", name, debPkg)
	}
	return p
}

// runPtdmon runs `ptdmon serve` in-process with cfg until the test ends
// and returns its base URL.
func runPtdmon(t *testing.T, ctx context.Context, cfg *config.Config, bytesPerReq int64) string {
	t.Helper()
	cfg.Listen = "127.0.0.1:0"
	cfg.KVBytesPerRequest = bytesPerReq
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	ready := make(chan string, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		err := service.Run(sctx, cfg, service.Options{
			KVRequest: kvsize.Request{Bytes: bytesPerReq, Basis: "simulator"},
			Logger:    quietLog(),
			Ready:     func(addr string) { ready <- addr },
		})
		if err != nil {
			t.Errorf("service.Run: %v", err)
		}
	}()
	t.Cleanup(func() { stop(); wg.Wait() })
	select {
	case addr := <-ready:
		return "http://" + addr
	case <-time.After(10 * time.Second):
		t.Fatal("ptdmon did not start")
	}
	return ""
}

// startSim runs the simulated cluster of sc, quietly, until the test ends.
func startSim(t *testing.T, ctx context.Context, sc sim.Scenario, seed int64, speed float64) *sim.Cluster {
	t.Helper()
	cl, err := sim.Start(ctx, sc, sim.Options{Seed: seed, Speed: speed, Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

// simConfig is a ptdmon configuration that scrapes every simulated engine.
func simConfig(cl *sim.Cluster) *config.Config {
	cfg := &config.Config{Window: config.Duration{Duration: window}}
	for _, tg := range cl.Targets() {
		cfg.Targets = append(cfg.Targets, config.TargetFrom(tg, ""))
	}
	return cfg
}

// startProc starts an external server until the test ends; its output is
// shown if the test fails.
func startProc(t *testing.T, ctx context.Context, bin string, args ...string) {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("%s output:\n%s", filepath.Base(bin), out.String())
		}
	})
}

// fleetPoint is what the comparisons read of one /api/v1/snapshot.
type fleetPoint struct {
	Time    time.Time
	Rates   stageRates
	Partial bool // an instance is down, stale, or without a windowed rate
	Targets []struct {
		Name          string            `json:"name"`
		Up            bool              `json:"up"`
		LastError     string            `json:"last_error"`
		Failures      map[string]uint64 `json:"failures"`
		CounterResets uint64            `json:"counter_resets"`
	}
}

func getPoint(t *testing.T, base string) (fleetPoint, bool) {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/snapshot")
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	defer resp.Body.Close()
	type stage struct {
		Window  *float64 `json:"requests_per_second_window"`
		Partial bool     `json:"partial"`
	}
	var s struct {
		Point *struct {
			Time                time.Time
			Prefill, KV, Decode stage
		} `json:"point"`
		Targets json.RawMessage `json:"targets"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	var fp fleetPoint
	if err := json.Unmarshal(s.Targets, &fp.Targets); err != nil {
		t.Fatalf("snapshot targets: %v", err)
	}
	p := s.Point
	if p == nil || p.Prefill.Window == nil || p.KV.Window == nil || p.Decode.Window == nil {
		return fp, false
	}
	fp.Time = p.Time
	fp.Rates = stageRates{*p.Prefill.Window, *p.KV.Window, *p.Decode.Window}
	fp.Partial = p.Prefill.Partial || p.KV.Partial || p.Decode.Partial
	return fp, true
}

// meanBetween averages the complete points stamped within [from, to].
func meanBetween(ps []fleetPoint, from, to time.Time) (stageRates, int) {
	var sel []stageRates
	for _, p := range ps {
		if !p.Partial && !p.Time.Before(from) && !p.Time.After(to) {
			sel = append(sel, p.Rates)
		}
	}
	if len(sel) == 0 {
		return stageRates{}, 0
	}
	return average(sel), len(sel)
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// writePromYML writes the Prometheus configuration `ptdmon gen prometheus`
// writes for in into dir and returns its path.
func writePromYML(t *testing.T, dir string, in gen.Input) string {
	t.Helper()
	promCfg, err := gen.PrometheusConfig(in)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(path, promCfg, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
