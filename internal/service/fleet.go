package service

import (
	"context"
	"log/slog"
	"net/url"

	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/tsdbsource"
)

// sourceRun returns the loop that reads the engines from a TSDB when the
// configuration has a source, nil when ptdmon scrapes them itself.
func sourceRun(cfg *config.Config, l *ledger.Ledger, kv engine.KVSource, log *slog.Logger) (func(context.Context), error) {
	if cfg.Source == "" {
		return nil, nil
	}
	_, base, err := config.ParseSource(cfg.Source)
	if err != nil {
		return nil, err
	}
	sh, err := cfg.ParseShard()
	if err != nil {
		return nil, err
	}
	src, err := tsdbsource.New(l, tsdbsource.Options{
		URL:              base,
		Interval:         cfg.Interval.Duration,
		Timeout:          cfg.Timeout.Duration,
		Window:           cfg.Window.Duration,
		MaxResponseBytes: cfg.MaxBodyBytes,
		KVSource:         kv,
		Shard:            sh,
		Logger:           log,
	})
	if err != nil {
		return nil, err
	}
	log.Info("reading the engines from a TSDB", "source", base, "shard", sh.String())
	return src.Run, nil
}

// inShard tells whether a scraped target belongs to the configured shard,
// by its address as Prometheus' hashmod on __address__ sees it.
func inShard(cfg *config.Config, rawURL string) bool {
	sh, err := cfg.ParseShard()
	if err != nil || !sh.Enabled() {
		return true
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return true
	}
	return sh.Keep(u.Host)
}
