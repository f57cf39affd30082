package service

import (
	"context"
	"log/slog"

	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/journey"
	"github.com/ptdmon/ptdmon/internal/scrape"
	"github.com/ptdmon/ptdmon/internal/trtllm/reqfeed"
)

// startPerfMetrics polls each TensorRT-LLM server of
// cfg.OTLP.PerfMetrics every interval into l until ctx ends.
func startPerfMetrics(ctx context.Context, cfg *config.Config, opts Options, l *journey.Ledger, log *slog.Logger) {
	src := cfg.OTLP.PerfMetrics
	if len(src) == 0 {
		return
	}
	client := opts.Client
	if client == nil {
		client = scrape.NewClient(len(src))
	}
	for _, s := range src {
		p := &reqfeed.Poller{URL: s.URL, Files: s.Files, Pool: s.Pool, Client: client, Ledger: l, Logger: log}
		go p.Run(ctx, cfg.Interval.Duration)
		log.Info("reading TensorRT-LLM per-request perf metrics", "url", s.URL, "files", s.Files, "pool", s.Pool)
	}
}
