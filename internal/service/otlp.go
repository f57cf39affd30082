package service

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/journey"
	"github.com/ptdmon/ptdmon/internal/otlp"
)

// startOTLP starts the trace receiver of cfg.OTLP.Listen, feeding a request
// ledger, until ctx ends; stopped is closed once it has let go of its port.
// Without a listen address it returns no ledger and a closed stopped.
func startOTLP(ctx context.Context, cfg *config.Config, opts Options, log *slog.Logger) (l *journey.Ledger, r *otlp.Receiver, stopped <-chan struct{}, err error) {
	done := make(chan struct{})
	o := cfg.OTLP
	if o.Listen == "" {
		close(done)
		return nil, nil, done, nil
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return nil, nil, nil, setupError{fmt.Errorf("listen for OTLP on %s: %w", o.Listen, err)}
	}
	l = journey.NewLedger(o.MaxSpans)
	r = otlp.New(otlp.Config{MaxBytes: o.MaxBytes, MaxSpans: o.MaxSpans, Forward: o.Forward},
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
	return l, r, done, nil
}
