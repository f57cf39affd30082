package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/ptdmon/ptdmon/internal/cli"
	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
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
	var (
		cfgPath  = fs.String("config", "", "ptdmon.yaml")
		cfgWait  = fs.Duration("config-wait", 0, "wait up to this long for -config to appear (e.g. written by ptdmon sim -config-out)")
		prefill  listFlag
		decode   listFlag
		listen   = cli.HostPort(fs, "listen", "", "address to serve on, host:port (default "+config.DefaultListen+")")
		interval = fs.Duration("interval", 0, "scrape interval (default 1s)")
		timeout  = fs.Duration("timeout", 0, "scrape timeout, shorter than the interval (default 4/5 of it)")
		window   = fs.Duration("window", 0, "window W of the windowed rates (default 5s)")
		kvSource = fs.String("kv-source", "", "KV byte source: "+engine.KVSourceChoices())
		kvBytes  = fs.Int64("kv-bytes-per-request", 0, "B_request: bytes of one request's KV cache")
		modelCfg = fs.String("model-config", "", "model's config.json, to compute B_request (with -seq-len)")
		seqLen   = fs.Int("seq-len", 0, "input length S of the test run, in tokens (e.g. 8192)")
		kvDtype  = fs.String("kv-dtype", "", "KV cache dtype: auto, bf16, fp16, fp8, fp8_e4m3, fp8_e5m2")
		tp       = fs.Int("tp", 0, "tensor-parallel size of the engines (for the wire bytes of replicated KV heads)")
		webCfg   = fs.String("web.config.file", "", "exporter-toolkit web configuration (TLS, basic auth) for the HTTP server")
		hosts    = fs.String("allowed-hosts", "", "comma-separated Host headers to answer (default: any)")
		source   = fs.String("source", "", "read the engines from a TSDB instead of scraping them: prometheus=URL (Prometheus, VictoriaMetrics, Thanos, Mimir)")
		shardArg = fs.String("shard", "", "keep only the targets of shard i/N (Prometheus hashmod of the target address)")
		pprof    = fs.Bool("debug.pprof", false, "serve Go's CPU, heap and goroutine profiles under /debug/pprof/")
	)
	applyAdvice := adviceFlags(fs)
	fs.Var(&prefill, "prefill", "prefill target URL or name=URL (repeatable)")
	fs.Var(&decode, "decode", "decode target URL or name=URL (repeatable)")
	return c.Run(args, func([]string) error {
		log := c.Logger()
		if *modelCfg != "" && *seqLen == 0 {
			return cli.Usagef("-seq-len is required with -model-config (prompt tokens per request, e.g. 8192)")
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
		for _, u := range prefill {
			cfg.Targets = append(cfg.Targets, config.TargetFlag("prefill", u))
		}
		for _, u := range decode {
			cfg.Targets = append(cfg.Targets, config.TargetFlag("decode", u))
		}
		given := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
		setDur := func(key string, v time.Duration) {
			if given[key] {
				cfg.SetDuration(key, v)
			}
		}
		if *webCfg != "" {
			cfg.WebConfigFile = *webCfg
		}
		if *hosts != "" {
			cfg.AllowedHosts = strings.Split(*hosts, ",")
		}
		if *source != "" {
			cfg.Source = *source
		}
		if *shardArg != "" {
			cfg.Shard = *shardArg
		}
		if *listen != "" {
			cfg.Listen = *listen
		}
		setDur("interval", *interval)
		setDur("timeout", *timeout)
		setDur("window", *window)
		applyAdvice(cfg)
		if *kvSource != "" {
			cfg.KVSource = *kvSource
		}
		if *kvBytes != 0 {
			cfg.KVBytesPerRequest = *kvBytes
		}
		if *modelCfg != "" {
			cfg.Model.Config = *modelCfg
		}
		if *seqLen != 0 {
			cfg.Model.SeqLen = *seqLen
		}
		if *kvDtype != "" {
			cfg.Model.KVDtype = *kvDtype
		}
		if *tp != 0 {
			cfg.Model.TP = *tp
		}
		cfg.SetDefaults()
		if err := cfg.Validate(); err != nil {
			return cli.Usage(err)
		}
		src := kvsize.SourceConfig
		if *kvBytes != 0 {
			src = kvsize.SourceFlag
		}
		kv, err := bRequest(cfg, src)
		if err != nil {
			return cli.Usage(err)
		}
		ctx, stop := serveContext()
		defer stop()
		err = service.Run(ctx, cfg, service.Options{
			KVRequest: kv,
			Logger:    log,
			Pprof:     *pprof,
			Ready: func(addr string) {
				fmt.Fprintf(stdout, "ptdmon: serving on %s://%s/\n", service.Scheme(cfg.WebConfigFile), addr)
			},
		})
		if errors.Is(err, service.ErrSetup) {
			// A listen address taken, a file_sd or web config that cannot be read.
			return cli.Usage(err)
		}
		return err
	})
}

// bRequest settles B_request from the configuration; source says who gave
// kv_bytes_per_request when it is set.
func bRequest(cfg *config.Config, source string) (ledger.KVRequest, error) {
	r, err := kvsize.Resolve(cfg.KVBytesPerRequest, source, cfg.Model.Config, kvsize.Options{
		SeqLen: cfg.Model.SeqLen, KVDtype: cfg.Model.KVDtype, TP: cfg.Model.TP, WindowMode: cfg.Model.WindowMode,
	})
	if err != nil {
		return ledger.KVRequest{}, err
	}
	kv := ledger.KVRequest{Bytes: float64(r.Bytes), Source: r.Source}
	if r.Detail != nil {
		kv.Detail = *r.Detail
	}
	return kv, nil
}

// adviceFlags defines the SLO thresholds and the headroom of the advice;
// the returned function sets those given on cfg, where they override
// ptdmon.yaml and are validated like it.
func adviceFlags(fs *flag.FlagSet) func(*config.Config) {
	slos := map[string]*float64{
		"ttft": fs.Float64("slo-ttft", 0, "TTFT SLO in seconds, for the attainment in /api/v1/advice and the UI"),
		"itl":  fs.Float64("slo-itl", 0, "ITL SLO in seconds"),
		"e2e":  fs.Float64("slo-e2e", 0, "E2E latency SLO in seconds"),
	}
	headroom := fs.Float64("headroom", 0, "fraction of capacity the advice leaves unused (default 0.2)")
	return func(cfg *config.Config) {
		fs.Visit(func(f *flag.Flag) {
			if key, ok := strings.CutPrefix(f.Name, "slo-"); ok && slos[key] != nil {
				cfg.SetSLO(key, *slos[key])
			}
			if f.Name == "headroom" {
				cfg.SetHeadroom(*headroom)
			}
		})
	}
}
