package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ptdmon/ptdmon/internal/api"
	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/service"
	"github.com/ptdmon/ptdmon/internal/sim"
)

func init() {
	register("demo", "a simulated P/D cluster, the collector and the web UI in one process", runDemo)
}

func runDemo(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		listen   = fs.String("listen", config.DefaultListen, "address of the web UI and API (a free port is taken if this one is busy)")
		scenario = fs.String("scenario", "balanced", "built-in scenario: "+strings.Join(sim.ScenarioNames(), ", "))
		file     = fs.String("scenario-file", "", "YAML scenario (overrides -scenario; see docs/sim.md)")
		seed     = fs.Int64("seed", 1, "random seed of the simulated traffic")
		interval = fs.Duration("interval", time.Second, "scrape interval")
		window   = fs.Duration("window", 5*time.Second, "window W of the windowed rates")
		duration = fs.Duration("duration", 0, "stop after this long (0 = until interrupted)")
		logLevel = fs.String("log-level", "warn", "debug, info, warn or error")
	)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "ptdmon demo: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	log, err := newLogger(stderr, *logLevel)
	if err != nil {
		fmt.Fprintln(stderr, "ptdmon demo:", err)
		return 2
	}
	var sc sim.Scenario
	if *file != "" {
		sc, err = sim.LoadScenarioFile(*file)
	} else {
		sc, err = sim.LoadScenario(*scenario)
	}
	if err != nil {
		fmt.Fprintln(stderr, "ptdmon demo:", err)
		return 2
	}

	ctx, stop := runContext(*duration)
	defer stop()
	cluster, err := sim.Start(ctx, sc, sim.Options{Seed: *seed, Logger: log})
	if err != nil {
		fmt.Fprintln(stderr, "ptdmon demo: start the simulated cluster:", err)
		return 1
	}
	defer cluster.Close()

	cfg := &config.Config{
		Listen:   *listen,
		Interval: config.Duration{Duration: *interval},
		Window:   config.Duration{Duration: *window},
	}
	for _, t := range cluster.Targets() {
		cfg.Targets = append(cfg.Targets, config.Target{Name: t.Name, URL: t.URL, Role: t.Role, Engine: t.Engine, Source: "simulator"})
	}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		fmt.Fprintln(stderr, "ptdmon demo:", err)
		return 2
	}
	if *listen == config.DefaultListen && !portFree(*listen) {
		cfg.Listen = "127.0.0.1:0"
	}
	err = service.Run(ctx, cfg, service.Options{
		KVRequest: api.KVRequest{Bytes: float64(cluster.BytesPerRequest()), Source: "simulator"},
		Logger:    log,
		Ready: func(addr string) {
			fmt.Fprintf(stdout, "ptdmon demo: open http://%s/\n", addr)
			fmt.Fprintf(stderr, "scenario %s: %d simulated engines; truth at %s; Ctrl-C to stop\n", sc.Name, len(cfg.Targets), cluster.TruthURL())
		},
	})
	if err != nil {
		fmt.Fprintln(stderr, "ptdmon demo:", err)
		return 1
	}
	return 0
}
