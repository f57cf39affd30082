package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/ptdmon/ptdmon/internal/cli"
	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/service"
	"github.com/ptdmon/ptdmon/internal/sim"
)

func init() {
	register("demo", "a simulated P/D cluster, the collector and the web UI in one process", runDemo)
}

func runDemo(args []string, stdout, stderr io.Writer) int {
	c := cli.New("demo", "[flags]",
		"Starts a simulated P/D cluster and ptdmon serve watching it, then prints the web UI's URL.",
		cli.NoArgs, stdout, stderr)
	c.LogLevel(slog.LevelWarn)
	fs := c.Flags
	var (
		listen   = cli.HostPort(fs, "listen", config.DefaultListen, "address of the web UI and API, host:port (a free port is taken if the default is busy)")
		scenario = fs.String("scenario", "balanced", "built-in scenario: "+strings.Join(sim.ScenarioNames(), ", "))
		file     = fs.String("scenario-file", "", "YAML scenario (overrides -scenario; see docs/sim.md)")
		seed     = fs.Int64("seed", 1, "random seed of the simulated traffic")
		interval = fs.Duration("interval", time.Second, "scrape interval")
		window   = fs.Duration("window", config.DefaultWindow, "window W of the windowed rates")
		duration = fs.Duration("duration", 0, "stop after this long (0 = until interrupted)")
		otlpAddr = cli.HostPort(fs, "otlp.listen", "", "also receive OTLP traces (gRPC and HTTP) on host:port (docs/traces.md)")
		fpm      = fs.Bool("forward-pass-metrics", false, "the simulated vLLM and SGLang engines also publish forward-pass metrics over ZeroMQ, and ptdmon reads their busy time from them (docs/engines.md#forward-pass-metrics)")
	)
	sizing := defineRuntimeFlags(fs)
	advice := config.NewFlags(fs)
	adviceFlags(advice)
	recordDir := advice.String("record", "keep the run in this directory (a Prometheus TSDB and run.json; docs/runs.md)", func(c *config.Config) *string { return &c.Record.Dir })
	return c.Run(args, func([]string) error {
		if *recordDir != "" {
			if err := leftOut(); err != nil {
				return err
			}
		}
		log := c.Logger()
		sc, err := sim.LoadScenarioFrom(*file, *scenario)
		if err != nil {
			return cli.Usage(err)
		}

		ctx, stop := runContext(*duration)
		defer stop()
		cluster, err := sim.Start(ctx, sc, sim.Options{Seed: *seed, Logger: log, ForwardPassMetrics: *fpm})
		if err != nil {
			return fmt.Errorf("start the simulated cluster: %w", err)
		}
		defer cluster.Close()

		cfg := &config.Config{
			Listen:   *listen,
			Interval: config.Duration{Duration: *interval},
			Window:   config.Duration{Duration: *window},
		}
		for _, t := range cluster.Targets() {
			// As a user gives it: the decode batch limit no engine exports.
			if n := cluster.MaxNumSeqs(t.Name); n > 0 {
				t.Labels = map[string]string{ledger.LabelMaxNumSeqs: strconv.Itoa(n)}
			}
			cfg.Targets = append(cfg.Targets, config.TargetFrom(t, "simulator"))
		}
		cfg.OTLP.Listen = *otlpAddr
		advice.Apply(cfg)
		cfg.SetDefaults()
		if err := cfg.Validate(); err != nil {
			return cli.Usage(err)
		}
		if *listen == config.DefaultListen && !portFree(*listen) {
			cfg.Listen = "127.0.0.1:0"
		}
		opts := service.Options{
			KVRequest: kvsize.Request{Bytes: cluster.BytesPerRequest(), Basis: kvsize.BasisSimulator},
			Logger:    log,
			Ready: func(addr string) {
				fmt.Fprintf(stdout, "ptdmon demo: open http://%s/\n", addr)
				fmt.Fprintf(stderr, "scenario %s: %d simulated engines; truth at %s; Ctrl-C to stop\n", sc.Name, len(cfg.Targets), cluster.TruthURL())
			},
			OTLPReady: func(addr string) {
				// The simulated vLLM engines send their traces to the receiver.
				cluster.SendTraces(ctx, "http://"+addr+"/v1/traces", time.Second)
				fmt.Fprintf(stderr, "receiving OTLP traces on %s (the simulated vLLM engines send theirs)\n", addr)
			},
		}
		sizing.set(&opts)
		err = service.Run(ctx, cfg, opts)
		if errors.Is(err, service.ErrSetup) {
			// A listen address taken: a usage error, as serve says it.
			return cli.Usage(err)
		}
		return err
	})
}
