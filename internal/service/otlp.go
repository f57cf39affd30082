package service

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/journey"
	"github.com/ptdmon/ptdmon/internal/otlp"
)

// startOTLP starts the trace receiver of cfg.OTLP.Listen and the pollers
// of TensorRT-LLM's perf metrics, feeding one request book (journey.Book), until ctx
// ends, with the collectors of their counts; stopped is closed once the
// receiver has let go of its port. With neither it returns no book and a
// closed stopped.
func startOTLP(ctx context.Context, cfg *config.Config, opts Options, log *slog.Logger) (l *journey.Book, cs []prometheus.Collector, stopped <-chan struct{}, err error) {
	done := make(chan struct{})
	o := cfg.OTLP
	if o.Listen == "" && len(o.PerfMetrics) == 0 {
		close(done)
		return nil, nil, done, nil
	}
	l = journey.NewBook(o.MaxSpans)
	if o.Listen == "" {
		close(done)
		return l, startPerfMetrics(ctx, cfg, opts, l, log), done, nil
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return nil, nil, nil, setupError{fmt.Errorf("listen for OTLP on %s: %w", o.Listen, err)}
	}
	cs = startPerfMetrics(ctx, cfg, opts, l, log)
	r := otlp.New(otlp.Config{MaxBytes: o.MaxBytes, MaxSpans: o.MaxSpans, Forward: o.Forward},
		func(td ptrace.Traces) { l.Add(journey.Extract(td)) }, log)
	go func() {
		defer close(done)
		if err := r.Serve(ctx, ln); err != nil {
			log.Error("OTLP receiver stopped", "err", err)
		}
	}()
	addr := ln.Addr().String()
	log.Info("receiving OTLP traces (gRPC and HTTP)", "listen", addr, "forward", o.Forward)
	if opts.OTLPReady != nil {
		opts.OTLPReady(addr)
	}
	return l, append(cs, otlp.Collector{R: r}), done, nil
}
