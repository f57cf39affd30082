package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/ptdmon/ptdmon/internal/api"
	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/record"
	"github.com/ptdmon/ptdmon/internal/web"
)

// ReplayOptions configure Replay.
type ReplayOptions struct {
	Listen string
	// Speed is recorded seconds per second; 0 feeds the whole span at once.
	Speed float64
	// From and To bound the span replayed (zero: the run's start and end).
	// Everything before From is fed at once: the counters need it.
	From, To     time.Time
	AllowedHosts []string
	Logger       *slog.Logger
	Ready        func(addr string)
}

// Replay serves the web UI, the API and /metrics from a recording, its
// ledger fed with the recorded inputs (docs/runs.md#replay).
func Replay(ctx context.Context, run *record.Run, o ReplayOptions) error {
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	n, err := run.Ticks(o.To)
	if err != nil {
		return err
	}
	l := ledger.New(run.LedgerConfig(n))
	m := run.Meta()
	as := &api.Server{Ledger: l, Logger: log, Extra: web.Routes()}
	// The thresholds and headroom the run was recorded with.
	if c, err := config.Parse([]byte(m.Config), record.MetaFile); err == nil {
		as.SLO, as.Headroom = c.SLO, c.Headroom
	}
	var fed atomic.Int64
	var upTo atomic.Pointer[time.Time]
	as.Extra["GET /api/v1/record"] = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		st := replayStatus{Replay: true, Meta: m, Points: fed.Load(), Total: int64(n), From: o.From, To: o.To}
		if p := upTo.Load(); p != nil {
			st.At = *p
		}
		_ = json.NewEncoder(w).Encode(st)
	})
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return setupError{fmt.Errorf("listen on %s: %w", o.Listen, err)}
	}
	srv := &http.Server{
		Handler:           api.AllowHosts(o.AllowedHosts, as.Handler()),
		ReadHeaderTimeout: 5 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	srv.RegisterOnShutdown(as.CloseStreams)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()

	pace := pacer(ctx, o.From, o.Speed)
	feedDone := make(chan error, 1)
	go func() {
		_, err := run.Feed(l, o.To, func(at time.Time) bool {
			if !pace(at) {
				return false
			}
			fed.Add(1)
			upTo.Store(&at)
			return true
		})
		feedDone <- err
	}()
	if o.Speed == 0 {
		// The whole span is there before the first request.
		if err := <-feedDone; err != nil {
			srv.Close()
			return err
		}
		feedDone = nil
	}
	addr := ln.Addr().String()
	log.Info("ptdmon replaying", "listen", "http://"+addr+"/", "points", n, "speed", o.Speed)
	if o.Ready != nil {
		o.Ready(addr)
	}
wait:
	for {
		select {
		case <-ctx.Done():
			break wait
		case err = <-errc:
			break wait
		case err = <-feedDone:
			feedDone = nil
			if err != nil {
				break wait
			}
			log.Info("replay reached the end of the span; still serving it")
		}
	}
	shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = srv.Shutdown(shut)
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

type replayStatus struct {
	Replay bool        `json:"replay"`
	Meta   record.Meta `json:"run"`
	Points int64       `json:"points_fed"`
	Total  int64       `json:"points"`
	At     time.Time   `json:"at,omitzero"`
	From   time.Time   `json:"from,omitzero"`
	To     time.Time   `json:"to,omitzero"`
}

// pacer sleeps between ticks so that recorded time passes speed times as
// fast as real time, from from on; before it, and at speed 0, it does not
// wait. It returns false once ctx ends.
func pacer(ctx context.Context, from time.Time, speed float64) func(time.Time) bool {
	var prev time.Time
	return func(at time.Time) bool {
		if ctx.Err() != nil {
			return false
		}
		if speed <= 0 || at.Before(from) {
			return true
		}
		if !prev.IsZero() {
			d := time.Duration(float64(at.Sub(prev)) / speed)
			t := time.NewTimer(d)
			select {
			case <-ctx.Done():
				t.Stop()
				return false
			case <-t.C:
			}
		}
		prev = at
		return true
	}
}
