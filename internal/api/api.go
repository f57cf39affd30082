// Package api serves ptdmon's read-only HTTP surface: the JSON API, the
// server-sent event stream, /metrics and /healthz.
package api

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ptdmon/ptdmon/internal/export"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// KVRequest describes B_request and where it came from.
type KVRequest struct {
	Bytes  float64 `json:"bytes,omitempty"`
	Source string  `json:"source"` // "flag", "config", "model-config", "simulator" or "unset"
	// Detail is the computation behind the value (inputs and rules), when
	// it was computed from a model's config.json.
	Detail any `json:"detail,omitempty"`
}

// Server holds what the handlers read.
type Server struct {
	Ledger    *ledger.Ledger
	KVRequest KVRequest
	Logger    *slog.Logger
	// Extra routes (the web UI) mounted beside the API.
	Extra map[string]http.Handler
}

// Handler returns the HTTP handler for every route.
func (s *Server) Handler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(&export.Collector{Ledger: s.Ledger})
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		EnableOpenMetrics: true,
		ErrorHandling:     promhttp.ContinueOnError,
	}))
	mux.HandleFunc("GET /api/v1/snapshot", s.snapshot)
	mux.HandleFunc("GET /api/v1/series", s.series)
	mux.HandleFunc("GET /api/v1/stream", s.stream)
	mux.HandleFunc("GET /api/v1/targets", s.targets)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	for pattern, h := range s.Extra {
		mux.Handle(pattern, h)
	}
	return mux
}

// Snapshot is the body of /api/v1/snapshot.
type Snapshot struct {
	Time      time.Time             `json:"time"`
	Interval  float64               `json:"interval_seconds"`
	Window    float64               `json:"window_seconds"`
	KVRequest KVRequest             `json:"kv_request_bytes"`
	Point     *ledger.Point         `json:"point"`
	Targets   []ledger.TargetStatus `json:"targets"`
}

func (s *Server) snapshot(w http.ResponseWriter, r *http.Request) {
	cfg := s.Ledger.Config()
	snap := Snapshot{
		Time:      time.Now(),
		Interval:  cfg.Interval.Seconds(),
		Window:    cfg.Window.Seconds(),
		KVRequest: s.kvRequest(cfg),
		Targets:   s.Ledger.Targets(time.Now()),
	}
	if p, ok := s.Ledger.Latest(); ok {
		snap.Point = &p
	}
	writeJSON(w, snap)
}

func (s *Server) kvRequest(cfg ledger.Config) KVRequest {
	k := s.KVRequest
	k.Bytes = cfg.BytesPerRequest
	if k.Bytes <= 0 {
		k.Source = "unset"
	}
	return k
}

// Series is the body of /api/v1/series.
type Series struct {
	Interval float64        `json:"interval_seconds"`
	Window   float64        `json:"window_seconds"`
	Points   []ledger.Point `json:"points"`
}

// series returns the points after ?since= (unix milliseconds or RFC 3339;
// default: the whole history). ?instances=0 leaves per-instance detail out.
func (s *Server) series(w http.ResponseWriter, r *http.Request) {
	since, err := parseSince(r.URL.Query().Get("since"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	pts := s.Ledger.Since(since)
	if r.URL.Query().Get("instances") == "0" {
		for i := range pts {
			pts[i].Instances = nil
		}
	}
	cfg := s.Ledger.Config()
	writeJSON(w, Series{Interval: cfg.Interval.Seconds(), Window: cfg.Window.Seconds(), Points: pts})
}

func parseSince(v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.UnixMilli(ms), nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("since=%q: want unix milliseconds or RFC 3339", v)
	}
	return t, nil
}

func (s *Server) targets(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, s.Ledger.Targets(time.Now()))
}

// stream sends one "point" event per tick. Clients reconnect by themselves
// (EventSource); the retry hint keeps that quick.
func (s *Server) stream(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	ch, cancel := s.Ledger.Subscribe()
	defer cancel()
	fmt.Fprint(w, "retry: 2000\n\n")
	fl.Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case p, ok := <-ch:
			if !ok {
				return
			}
			b, err := json.Marshal(p)
			if err != nil {
				s.log().Error("encode point", "err", err)
				return
			}
			if _, err := fmt.Fprintf(w, "event: point\nid: %d\ndata: %s\n\n", p.Time.UnixMilli(), b); err != nil {
				return
			}
			fl.Flush()
		}
	}
}

func (s *Server) log() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	if err := enc.Encode(v); err != nil {
		slog.Default().Error("encode response", "err", err)
	}
}
