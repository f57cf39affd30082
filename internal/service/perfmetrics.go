package service

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/journey"
	"github.com/ptdmon/ptdmon/internal/scrape"
	"github.com/ptdmon/ptdmon/internal/trtllm/reqfeed"
)

// startPerfMetrics polls each TensorRT-LLM server of
// cfg.OTLP.PerfMetrics every interval into l until ctx ends; the
// collector counts what they did.
func startPerfMetrics(ctx context.Context, cfg *config.Config, opts Options, l *journey.Book, log *slog.Logger) []prometheus.Collector {
	src := cfg.OTLP.PerfMetrics
	if len(src) == 0 {
		return nil
	}
	var c reqfeed.Collector
	client := opts.Client
	if client == nil {
		client = scrape.NewClient(len(src))
	}
	for _, s := range src {
		p := &reqfeed.Poller{URL: s.URL, Files: s.Files, Pool: s.Pool, Client: client, Book: l, Logger: log}
		c.Pollers = append(c.Pollers, p)
		go p.Run(ctx, cfg.Interval.Duration)
		log.Info("reading TensorRT-LLM per-request perf metrics", "url", s.URL, "files", s.Files, "pool", s.Pool)
	}
	return []prometheus.Collector{c}
}
