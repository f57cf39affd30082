package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/ptdmon/ptdmon/internal/cli"
	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/service"
)

func init() {
	register("serve", "scrape engines and serve rates, the web UI and /metrics", runServe)
}

// serveContext is the lifetime of a serve: until SIGINT or SIGTERM. Tests
// that run a serve end it by replacing this.
var serveContext = func() (context.Context, context.CancelFunc) { return runContext(0) }

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return fmt.Sprint(*l) }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func runServe(args []string, stdout, stderr io.Writer) int {
	c := cli.New("serve", "[flags]",
		"Scrapes the engines every interval and serves the web UI, the JSON API and /metrics.\n"+
			"Targets come from -config, -prefill and -decode (all of them add up).",
		cli.NoArgs, stdout, stderr)
	c.LogLevel(slog.LevelInfo)
	fs := c.Flags
	cfgPath := fs.String("config", "", "ptdmon.yaml")
	cfgWait := fs.Duration("config-wait", 0, "wait up to this long for -config to appear (e.g. written by ptdmon sim -config-out)")
	pprof := fs.Bool("debug.pprof", false, "serve Go's CPU, heap and goroutine profiles under /debug/pprof/")
	sizing := defineRuntimeFlags(fs)

	// The rest is bound to the configuration's fields, over -config's.
	fl := config.NewFlags(fs)
	targetFlags(fs, fl)
	listen := cli.HostPort(fs, "listen", "", "address to serve on, host:port (default "+config.DefaultListen+")")
	fl.StringVar(listen, "listen", func(c *config.Config) *string { return &c.Listen })
	fl.Duration("timeout", "timeout", "scrape timeout, shorter than the interval (default 4/5 of it)", func(c *config.Config) *config.Duration { return &c.Timeout })
	fl.String("kv-source", "KV byte source: "+engine.KVSourceChoices(), func(c *config.Config) *string { return &c.KVSource })
	model := modelFlags(fl, " (for the wire bytes of replicated KV heads)")
	fl.String("web.config.file", "exporter-toolkit web configuration (TLS, basic auth) for the HTTP server", func(c *config.Config) *string { return &c.WebConfigFile })
	fl.List("allowed-hosts", "comma-separated Host headers to answer (default: any)", func(c *config.Config) *[]string { return &c.AllowedHosts })
	fl.String("source", "read the engines from a TSDB instead of scraping them: prometheus=URL (Prometheus, VictoriaMetrics, Thanos, Mimir)", func(c *config.Config) *string { return &c.Source })
	fl.String("shard", "keep only the targets of shard i/N (Prometheus hashmod of the target address)", func(c *config.Config) *string { return &c.Shard })
	adviceFlags(fl)
	otlpFlags(fs, fl)
	fl.String("record", "keep the run in this directory, and resume from it (a Prometheus TSDB and run.json; docs/runs.md)", func(c *config.Config) *string { return &c.Record.Dir })
	return c.Run(args, func([]string) error {
		log := c.Logger()
		if err := model.check(); err != nil {
			return err
		}
		cfg := &config.Config{}
		if *cfgPath != "" {
			if err := cli.WaitForFile("-config", *cfgPath, *cfgWait, log); err != nil {
				return err
			}
			var err error
			if cfg, err = config.Load(*cfgPath); err != nil {
				return cli.Usage(err)
			}
		}
		fl.Apply(cfg)
		if cfg.Record.Dir != "" {
			if err := leftOut(); err != nil {
				return err
			}
		}
		kv, pools, err := settleConfig(cfg, model.kvGiven())
		if err != nil {
			return err
		}
		discover, err := kubeDiscovery(cfg, log)
		if err != nil {
			return err
		}
		ctx, stop := serveContext()
		defer stop()
		opts := service.Options{
			KVRequest: kv,
			Logger:    log,
			Discover:  discover,
			Pprof:     *pprof,
			Ready: func(addr string) {
				fmt.Fprintf(stdout, "ptdmon: serving on %s://%s/\n", service.Scheme(cfg.WebConfigFile), addr)
			},
			PoolRequests: pools,
		}
		sizing.set(&opts)
		err = service.Run(ctx, cfg, opts)
		if errors.Is(err, service.ErrSetup) {
			// A listen address taken, a file_sd or web config that cannot be read.
			return cli.Usage(err)
		}
		return err
	})
}

// settleConfig completes and validates cfg, and settles the deployment's and each
// pool's B_request; kvFlag says -kv-bytes-per-request was given. Its errors
// are usage errors.
func settleConfig(cfg *config.Config, kvFlag bool) (kvsize.Request, map[string]kvsize.Request, error) {
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return kvsize.Request{}, nil, cli.Usage(err)
	}
	basis := kvsize.BasisConfig
	if kvFlag {
		basis = kvsize.BasisFlag
	}
	kv, err := bRequest(cfg, basis)
	if err != nil {
		return kvsize.Request{}, nil, cli.Usage(err)
	}
	pools, err := cfg.PoolRequests()
	if err != nil {
		return kvsize.Request{}, nil, cli.Usage(err)
	}
	return kv, pools, nil
}

// bRequest settles B_request from the configuration; basis says who gave
// kv_bytes_per_request when it is set.
func bRequest(cfg *config.Config, basis string) (kvsize.Request, error) {
	return kvsize.Resolve(cfg.KVBytesPerRequest, basis, cfg.Model.Config, kvsize.Options{
		SeqLen: cfg.Model.SeqLen, KVDtype: cfg.Model.KVDtype, TP: cfg.Model.TP, WindowMode: cfg.Model.WindowMode,
	})
}

// adviceFlags binds the SLO thresholds and the headroom of the advice,
// which override ptdmon.yaml's and are validated like them.
func adviceFlags(fl *config.Flags) {
	fl.Float64("slo-ttft", "slo.ttft", "TTFT SLO in seconds, for the attainment in /api/v1/advice and the UI", func(c *config.Config) *float64 { return &c.SLO.TTFT })
	fl.Float64("slo-itl", "slo.itl", "ITL SLO in seconds", func(c *config.Config) *float64 { return &c.SLO.ITL })
	fl.Float64("slo-e2e", "slo.e2e", "E2E latency SLO in seconds", func(c *config.Config) *float64 { return &c.SLO.E2E })
	fl.OptionalFloat64("headroom", "headroom", "fraction of capacity the advice leaves unused (default 0.2)", func(c *config.Config) **float64 { return &c.Headroom })
	fl.String("capacities-from", "an earlier run's recording whose capacities the advice starts from (docs/advisor.md)", func(c *config.Config) *string { return &c.CapacitiesFrom })
}

// otlpFlags binds the trace receiver's settings (docs/traces.md).
func otlpFlags(fs *flag.FlagSet, fl *config.Flags) {
	listen := cli.HostPort(fs, "otlp.listen", "", "receive OTLP traces (gRPC and HTTP) on host:port, e.g. 127.0.0.1:4317")
	fl.StringVar(listen, "otlp.listen", func(c *config.Config) *string { return &c.OTLP.Listen })
	fl.String("otlp.forward", "forward the traces received, unchanged, to this OTLP/HTTP URL (e.g. http://tempo:4318/v1/traces)", func(c *config.Config) *string { return &c.OTLP.Forward })
	fl.Int64("otlp.max-bytes", "bytes of OTLP exports read at once (default 16 MiB)", func(c *config.Config) *int64 { return &c.OTLP.MaxBytes })
	fl.Int("otlp.max-spans", "spans the request ledger keeps (default 100000)", func(c *config.Config) *int { return &c.OTLP.MaxSpans })
}
