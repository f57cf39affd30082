package e2e

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/gen"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/sim"
)

// TestPrometheusPools: two simulated vLLM pools serving different models
// with different B_request, one named by its model and one by `pool:` on
// its targets. With the generated scrape configuration and rules in the
// real Prometheus, each pool's recorded stage rates on the engines path
// (KV by the pool's own B_request) agree with the simulator's truth for
// that pool's instances alone within 2%: each recorded sample held to the
// truth over lags of 0 to 4 s, as the engines path reads each target's
// scrape an interval late, and samples whose window holds a failed scrape
// left out, as in TestPrometheusBothPaths, and, as it, not beside this
// package's other tests.
func TestPrometheusPools(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the 30 s Prometheus run")
	}
	promBin := prometheusBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 70*time.Second)
	defer cancel()
	sc, err := sim.LoadScenario("balanced")
	if err != nil {
		t.Fatal(err)
	}
	llama := sc.Groups[0] // vLLM, FlagCX
	qwen := llama
	qwen.Name, qwen.Model, qwen.KVBytesPerRequest, qwen.Rate = "qwen", "Qwen/Qwen2.5-7B-Instruct", sim.LlamaKVBytes/2, 3
	sc.Groups = []sim.Group{llama, qwen}
	if err := sc.Validate(); err != nil {
		t.Fatal(err)
	}
	cl := startSim(t, ctx, sc, 11, simSpeed)
	cfg := simConfig(cl)
	for i := range cfg.Targets {
		if strings.HasPrefix(cfg.Targets[i].Name, "qwen-") {
			cfg.Targets[i].Pool = "chat"
		}
	}
	pools := map[string]string{sc.Model: llama.Name + "-", "chat": "qwen-"}
	bytes := map[string]int64{sc.Model: sc.KVBytesPerRequest, "chat": qwen.KVBytesPerRequest}
	in := gen.FromConfig(cfg, 0).WithPools(map[string]kvsize.Request{sc.Model: {Bytes: bytes[sc.Model]}, "chat": {Bytes: bytes["chat"]}})
	in.PtdmonAddr = "127.0.0.1:1" // the engines path alone
	in.RuleFiles = []string{"rules.yml"}
	promCfg, err := gen.PrometheusConfig(in)
	if err != nil {
		t.Fatal(err)
	}
	rules, err := gen.Rules(in).YAML()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, b := range map[string][]byte{"prometheus.yml": promCfg, "rules.yml": rules} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	started := time.Now()
	promURL := startPrometheus(t, ctx, promBin, dir, filepath.Join(dir, "prometheus.yml"))
	time.Sleep(time.Until(started.Add(runFor)))
	end := time.Now()

	n := gen.RecordNames(strconvDuration(window))
	failed := failedScrapes(t, promURL, gen.JobEngines, end, avgSpan+window+2*time.Second)
	for pool, prefix := range pools {
		for _, stage := range stages {
			sel := fmt.Sprintf(`%s{path="engines",pool=%q,stage=%q}[%ds]`, n.Stage[1], pool, stage, int(avgSpan/time.Second))
			series := queryMatrix(t, promURL, sel, end)
			if len(series) != 1 || len(series[0]) < int(avgSpan/time.Second)-2 {
				t.Errorf("pool %s %s: %d series recorded, want one over %s", pool, stage, len(series), avgSpan)
				continue
			}
			samples := withoutFailedScrapes(series[0], failed)
			if len(samples) < len(series[0]) {
				t.Logf("pool %s %s: %d of %d samples left out: their window holds a failed scrape (%v)", pool, stage, len(series[0])-len(samples), len(series[0]), failed)
			}
			if len(samples) < 3 {
				t.Errorf("pool %s %s: %d samples left whose window holds no failed scrape: Prometheus could not scrape every second here", pool, stage, len(samples))
				continue
			}
			truthAt := func(at time.Time) float64 { return poolRate(cl, at, stage, prefix, bytes[pool]) }
			var rec, truth float64
			for _, s := range samples {
				rec += s.v
				truth += nearest(truthAt, s.t, s.v, 0, 4*time.Second)
			}
			k := float64(len(samples))
			rec, truth = rec/k, truth/k
			t.Logf("pool %-33s %-7s recorded %8.3f req/s  truth %8.3f (%+.2f%%)", pool, stage, rec, truth, 100*rel(rec, truth))
			if math.Abs(rel(rec, truth)) > tolerance {
				t.Errorf("pool %s %s: recorded %.3f, truth %.3f: beyond %.0f%%", pool, stage, rec, truth, 100*tolerance)
			}
		}
	}
	// No other pool: every instance is in one of the two.
	if s := queryMatrix(t, promURL, fmt.Sprintf(`%s{path="engines",stage="prefill"}[5s]`, n.Stage[1]), end); len(s) != len(pools) {
		t.Errorf("%d pools' prefill recorded, want %d", len(s), len(pools))
	}
	checkRulesHealthy(t, promURL)
}

// poolRate is the simulator's exact stage rate over the window ending at t
// of the instances named with prefix, KV by the pool's B_request.
func poolRate(cl *sim.Cluster, t time.Time, stage, prefix string, bReq int64) float64 {
	a, b := cl.TruthAt(t.Add(-window)), cl.TruthAt(t)
	sec := b.At.Sub(a.At).Seconds()
	var d sim.Counts
	for _, in := range b.Instances {
		if !strings.HasPrefix(in.Name, prefix) {
			continue
		}
		before := a.Instance(in.Name)
		d.PrefillCompleted += in.PrefillCompleted - before.PrefillCompleted
		d.DecodeCompleted += in.DecodeCompleted - before.DecodeCompleted
		d.KVBytes += in.KVBytes - before.KVBytes
	}
	switch stage {
	case "prefill":
		return float64(d.PrefillCompleted) / sec
	case "kv":
		return float64(d.KVBytes) / sec / float64(bReq)
	}
	return float64(d.DecodeCompleted) / sec
}
