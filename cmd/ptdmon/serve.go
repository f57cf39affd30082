package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/ptdmon/ptdmon/internal/api"
	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/service"
)

func init() {
	register("serve", "scrape engines and serve rates, the web UI and /metrics", runServe)
}

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return fmt.Sprint(*l) }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func runServe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		cfgPath  = fs.String("config", "", "ptdmon.yaml")
		prefill  listFlag
		decode   listFlag
		listen   = fs.String("listen", "", "address to serve on (default "+config.DefaultListen+")")
		interval = fs.Duration("interval", 0, "scrape interval (default 1s)")
		timeout  = fs.Duration("timeout", 0, "scrape timeout, shorter than the interval (default 4/5 of it)")
		window   = fs.Duration("window", 0, "window W of the windowed rates (default 5s)")
		kvSource = fs.String("kv-source", "", "KV byte source: auto, flagcx, nixl, mooncake, sglang, dynamo, none")
		kvBytes  = fs.Int64("kv-bytes-per-request", 0, "B_request: bytes of one request's KV cache")
		modelCfg = fs.String("model-config", "", "model's config.json, to compute B_request (with -seq-len)")
		seqLen   = fs.Int("seq-len", 0, "input length S of the test run, in tokens (e.g. 8192)")
		kvDtype  = fs.String("kv-dtype", "", "KV cache dtype: auto, bf16, fp16, fp8, fp8_e4m3, fp8_e5m2")
		tp       = fs.Int("tp", 0, "tensor-parallel size of the engines (for the wire bytes of replicated KV heads)")
		logLevel = fs.String("log-level", "info", "debug, info, warn or error")
		webCfg   = fs.String("web.config.file", "", "exporter-toolkit web configuration (TLS, basic auth) for the HTTP server")
		hosts    = fs.String("allowed-hosts", "", "comma-separated Host headers to answer (default: any)")
		pprof    = fs.Bool("debug.pprof", false, "serve Go's CPU, heap and goroutine profiles under /debug/pprof/")
	)
	fs.Var(&prefill, "prefill", "prefill target URL or name=URL (repeatable)")
	fs.Var(&decode, "decode", "decode target URL or name=URL (repeatable)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	log, err := newLogger(stderr, *logLevel)
	if err != nil {
		fmt.Fprintln(stderr, "ptdmon serve:", err)
		return 2
	}
	cfg := &config.Config{}
	if *cfgPath != "" {
		if cfg, err = config.Load(*cfgPath); err != nil {
			fmt.Fprintln(stderr, "ptdmon serve:", err)
			return 2
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
	if *listen != "" {
		cfg.Listen = *listen
	}
	setDur("interval", *interval)
	setDur("timeout", *timeout)
	setDur("window", *window)
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
		fmt.Fprintln(stderr, "ptdmon serve:", err)
		return 2
	}
	kv, err := kvRequestFromConfig(cfg, *kvBytes != 0)
	if err != nil {
		fmt.Fprintln(stderr, "ptdmon serve:", err)
		return 2
	}
	ctx, stop := runContext(0)
	defer stop()
	err = service.Run(ctx, cfg, service.Options{
		KVRequest: kv,
		Logger:    log,
		Pprof:     *pprof,
		Ready: func(addr string) {
			fmt.Fprintf(stdout, "ptdmon: serving on http://%s/\n", addr)
		},
	})
	if err != nil {
		fmt.Fprintln(stderr, "ptdmon serve:", err)
		if errors.Is(err, service.ErrSetup) {
			return 2
		}
		return 1
	}
	return 0
}

// kvRequestFromConfig settles B_request.
func kvRequestFromConfig(cfg *config.Config, fromFlag bool) (api.KVRequest, error) {
	if cfg.KVBytesPerRequest > 0 {
		src := "config"
		if fromFlag {
			src = "flag"
		}
		return api.KVRequest{Bytes: float64(cfg.KVBytesPerRequest), Source: src}, nil
	}
	if cfg.Model.Config != "" {
		res, err := kvsize.FromFile(cfg.Model.Config, kvsize.Options{
			SeqLen: cfg.Model.SeqLen, KVDtype: cfg.Model.KVDtype, TP: cfg.Model.TP, WindowMode: cfg.Model.WindowMode,
		})
		if err != nil {
			return api.KVRequest{}, err
		}
		// B_request is what the byte counters see per request: with TP
		// replication the connectors move the replicated heads too.
		b := res.BytesPerRequest
		if res.WireBytesPerRequest > 0 {
			b = res.WireBytesPerRequest
		}
		return api.KVRequest{Bytes: float64(b), Source: "model-config", Detail: res}, nil
	}
	return api.KVRequest{Source: "unset"}, nil
}

func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("-log-level %q: %w", level, err)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}
