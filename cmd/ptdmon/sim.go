package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/ptdmon/ptdmon/internal/sim"
)

func init() {
	register("sim", "run simulated P/D engines on loopback ports", runSim)
}

// simOverrides are flag values that, when set, replace scenario values in
// every group.
type simOverrides struct {
	rate, prefillTokPerSec, kvBandwidth float64
	prefill, decode, inTok, outTok      int
	threads, decodeBatch                int
	kvBytes                             int64
	decodeStep                          time.Duration
	model, vllmConnector                string
}

func (o simOverrides) apply(sc *sim.Scenario) error {
	if o.rate < 0 || o.prefill < 0 || o.decode < 0 || o.inTok < 0 || o.outTok < 0 || o.kvBytes < 0 ||
		o.prefillTokPerSec < 0 || o.kvBandwidth < 0 || o.threads < 0 || o.decodeBatch < 0 || o.decodeStep < 0 {
		return errors.New("override values must not be negative")
	}
	if o.rate > 0 {
		sc.SetTotalRate(o.rate)
	}
	if o.inTok > 0 {
		sc.InputTokens = o.inTok
	}
	if o.outTok > 0 {
		sc.OutputTokens = o.outTok
	}
	if o.kvBytes > 0 {
		sc.KVBytesPerRequest = o.kvBytes
	}
	if o.model != "" {
		sc.Model = o.model
	}
	for i := range sc.Groups {
		g := &sc.Groups[i]
		if o.prefill > 0 {
			g.Prefill.Instances = o.prefill
		}
		if o.decode > 0 {
			g.Decode.Instances = o.decode
		}
		if o.prefillTokPerSec > 0 {
			g.Prefill.TokensPerSec = o.prefillTokPerSec
		}
		if o.kvBandwidth > 0 {
			g.Transfer.BandwidthBytesPerSec = o.kvBandwidth
		}
		if o.threads > 0 {
			g.Transfer.Threads = o.threads
		}
		if o.decodeStep > 0 {
			g.Decode.StepTime = o.decodeStep
		}
		if o.decodeBatch > 0 {
			g.Decode.MaxBatch = o.decodeBatch
			if g.Decode.KVSlots < o.decodeBatch {
				g.Decode.KVSlots = o.decodeBatch
			}
		}
		if o.vllmConnector != "" && g.Engine == sim.EngineVLLM {
			g.Connector = o.vllmConnector
		}
	}
	// Restarts and fault lists name instances; drop those that a smaller
	// instance count removed rather than failing on them.
	names := map[string]bool{}
	for _, n := range sc.InstanceNames() {
		names[n] = true
	}
	var rs []sim.Restart
	for _, r := range sc.Restarts {
		if names[r.Instance] {
			rs = append(rs, r)
		}
	}
	sc.Restarts = rs
	var fi []string
	for _, n := range sc.Faults.Instances {
		if names[n] {
			fi = append(fi, n)
		}
	}
	sc.Faults.Instances = fi
	return sc.Validate()
}

func runSim(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o simOverrides
	var (
		scenario  = fs.String("scenario", "balanced", "built-in scenario: "+strings.Join(sim.ScenarioNames(), ", "))
		file      = fs.String("scenario-file", "", "YAML scenario (overrides -scenario; see docs/sim.md)")
		seed      = fs.Int64("seed", 1, "random seed: same seed and scenario, same traffic")
		host      = fs.String("listen-host", "127.0.0.1", "address the engines and the control server listen on")
		duration  = fs.Duration("duration", 0, "stop after this long (0 = until SIGINT/SIGTERM)")
		speed     = fs.Float64("speed", 1, "simulated seconds per wall-clock second")
		configOut = fs.String("config-out", "", "also write the ptdmon.yaml to this file")
		promOut   = fs.String("prometheus-out", "", "also write the Prometheus scrape config to this file")
		logLevel  = fs.String("log-level", "info", "debug, info, warn or error")
	)
	fs.Float64Var(&o.rate, "rate", 0, "total arrival rate in requests/s, split over groups in proportion (0 = scenario's)")
	fs.IntVar(&o.prefill, "prefill", 0, "prefill instances per group (0 = scenario's)")
	fs.IntVar(&o.decode, "decode", 0, "decode instances per group (0 = scenario's)")
	fs.IntVar(&o.inTok, "input-tokens", 0, "input length S in tokens (0 = scenario's, 8192)")
	fs.IntVar(&o.outTok, "output-tokens", 0, "output length in tokens (0 = scenario's, 256)")
	fs.Int64Var(&o.kvBytes, "kv-bytes-per-request", 0, "B_request in bytes (0 = scenario's, 1 GiB = Llama-3.1-8B bf16 at S=8192)")
	fs.Float64Var(&o.prefillTokPerSec, "prefill-tokens-per-sec", 0, "prompt tokens/s of one prefill engine (0 = scenario's)")
	fs.Float64Var(&o.kvBandwidth, "kv-bandwidth", 0, "KV link bytes/s of one prefill engine (0 = scenario's)")
	fs.IntVar(&o.threads, "transfer-threads", 0, "KV transfer threads per prefill engine (0 = scenario's)")
	fs.DurationVar(&o.decodeStep, "decode-step", 0, "time of one decode step (0 = scenario's)")
	fs.IntVar(&o.decodeBatch, "decode-batch", 0, "max running requests per decode engine (0 = scenario's)")
	fs.StringVar(&o.model, "model", "", "served model name (empty = scenario's)")
	fs.StringVar(&o.vllmConnector, "vllm-connector", "", "KV connector of vLLM groups: flagcx or nixl")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "ptdmon sim: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintln(stderr, "ptdmon sim: -log-level:", err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	var sc sim.Scenario
	var err error
	if *file != "" {
		sc, err = sim.LoadScenarioFile(*file)
	} else {
		sc, err = sim.LoadScenario(*scenario)
	}
	if err != nil {
		fmt.Fprintln(stderr, "ptdmon sim:", err)
		return 2
	}
	if err := o.apply(&sc); err != nil {
		fmt.Fprintln(stderr, "ptdmon sim: overrides:", err)
		return 2
	}
	if *speed <= 0 {
		fmt.Fprintln(stderr, "ptdmon sim: -speed must be > 0")
		return 2
	}

	ctx, stop := runContext(*duration)
	defer stop()
	c, err := sim.Start(ctx, sc, sim.Options{Seed: *seed, ListenHost: *host, Speed: *speed, Logger: log})
	if err != nil {
		fmt.Fprintln(stderr, "ptdmon sim:", err)
		return 1
	}
	defer c.Close()

	cfg := simPtdmonYAML(c, *seed)
	prom := simPrometheusYAML(c)
	for _, w := range []struct{ path, body string }{{*configOut, cfg}, {*promOut, prom}} {
		if w.path == "" {
			continue
		}
		if err := os.WriteFile(w.path, []byte(w.body), 0o644); err != nil {
			fmt.Fprintln(stderr, "ptdmon sim:", err)
			return 1
		}
	}
	// One stream, two YAML documents: a loader reading only the first one
	// (ptdmon's config) can be fed stdout as it is.
	fmt.Fprint(stdout, cfg, "---\n", prom)
	log.Info("simulated cluster running", "scenario", sc.Name, "instances", len(c.Targets()),
		"truth", c.TruthURL(), "rate", sc.TotalRate())
	<-ctx.Done()
	log.Info("simulated cluster stopping")
	return 0
}

func simPtdmonYAML(c *sim.Cluster, seed int64) string {
	sc := c.Scenario()
	var b strings.Builder
	fmt.Fprintf(&b, "# ptdmon.yaml for the simulated cluster: scenario %q, seed %d.\n", sc.Name, seed)
	fmt.Fprintf(&b, "# Ground truth (exact cumulative counts, ?at=<unix-ns> or ?from=&to=): %s\n", c.TruthURL())
	fmt.Fprintf(&b, "kv_bytes_per_request: %d\n", c.BytesPerRequest())
	b.WriteString("targets:\n")
	for _, t := range c.Targets() {
		fmt.Fprintf(&b, "  - name: %s\n    url: %s\n    role: %s\n    engine: %s\n", t.Name, t.URL, t.Role, t.Engine)
	}
	return b.String()
}

// simPrometheusYAML attaches the role as a target label. The engine kind goes
// in ptd_engine because `engine` is a label vLLM itself exports.
func simPrometheusYAML(c *sim.Cluster) string {
	var b strings.Builder
	b.WriteString("# Prometheus scrape config for the simulated engines (merge into prometheus.yml).\n")
	b.WriteString("scrape_configs:\n  - job_name: ptdmon-sim\n    scrape_interval: 1s\n    scrape_timeout: 900ms\n    static_configs:\n")
	for _, t := range c.Targets() {
		u, err := url.Parse(t.URL)
		if err != nil {
			continue
		}
		// __metrics_path__ sends TensorRT-LLM scrapes to /prometheus/metrics:
		// its /metrics is JSON and drained on read.
		fmt.Fprintf(&b, "      - targets: [\"%s\"]\n        labels: {__metrics_path__: %s, ptd_role: %s, ptd_engine: %s, ptd_target: %s}\n",
			u.Host, u.Path, t.Role, t.Engine, t.Name)
	}
	return b.String()
}
