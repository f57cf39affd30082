// Package api serves ptdmon's read-only HTTP surface: the JSON API, the
// server-sent event stream, /metrics and /healthz.
package api

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ptdmon/ptdmon/internal/diagnose"
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
	// Diagnose configures the bottleneck verdict (zero: defaults).
	Diagnose diagnose.Config

	verdicts verdictCache
	past     timelineCache
}

// Handler returns the HTTP handler for every route.
func (s *Server) Handler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(&export.Collector{Ledger: s.Ledger, Stage: s.stage})
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
	Verdict   *diagnose.Verdict     `json:"verdict"`
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
		snap.Verdict = s.verdictAt(p.Time)
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
	// Verdict is the bottleneck verdict at the newest point.
	Verdict *diagnose.Verdict `json:"verdict"`
	// Verdicts is the verdict timeline over the points.
	Verdicts []VerdictSpan `json:"verdicts"`
}

// CompactSeries is the body of /api/v1/series?format=compact: the stream's
// encoding, so that a client decodes history and live points alike.
type CompactSeries struct {
	Format   string              `json:"format"`
	Interval float64             `json:"interval_seconds"`
	Window   float64             `json:"window_seconds"`
	Fields   map[string][]string `json:"fields"`
	// Points are compact points, oldest first; the newest carries "v".
	Points []json.RawMessage `json:"points"`
	// Verdicts is the verdict timeline over the points.
	Verdicts []VerdictSpan `json:"verdicts"`
}

// series returns the points after ?since= (unix milliseconds or RFC 3339;
// default: the whole history) or the newest ?last= seconds of them.
// ?instances=0 leaves per-instance detail out; ?format=compact uses the
// stream's short encoding.
func (s *Server) series(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	since, err := parseSince(q.Get("since"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if v := q.Get("last"); v != "" {
		secs, err := strconv.ParseFloat(v, 64)
		if err != nil || secs <= 0 {
			http.Error(w, fmt.Sprintf("last=%q: want seconds > 0", v), http.StatusBadRequest)
			return
		}
		if p, ok := s.Ledger.Latest(); ok {
			if t := p.Time.Add(-time.Duration(secs * float64(time.Second))); t.After(since) {
				since = t
			}
		}
	}
	pts := s.Ledger.Since(since)
	if q.Get("instances") == "0" {
		for i := range pts {
			pts[i].Instances = nil
		}
	}
	var verdict *diagnose.Verdict
	if len(pts) > 0 {
		verdict = s.verdictAt(pts[len(pts)-1].Time)
	}
	cfg := s.Ledger.Config()
	switch q.Get("format") {
	case "", "full":
		writeJSONGzip(w, r, Series{Interval: cfg.Interval.Seconds(), Window: cfg.Window.Seconds(), Points: pts, Verdict: verdict,
			Verdicts: s.timeline(pts)})
	case "compact":
		out := CompactSeries{Format: CompactFormat, Interval: cfg.Interval.Seconds(), Window: cfg.Window.Seconds(),
			Fields: CompactFields, Points: make([]json.RawMessage, len(pts)), Verdicts: s.timeline(pts)}
		var enc compactEncoder
		for i := range pts {
			var v *diagnose.Verdict
			if i == len(pts)-1 {
				v = verdict
			}
			out.Points[i] = enc.encode(nil, &pts[i], v)
		}
		writeJSONGzip(w, r, out)
	default:
		http.Error(w, fmt.Sprintf("format=%q: want full or compact", q.Get("format")), http.StatusBadRequest)
	}
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

// stream sends one "point" event per tick with the verdict at that point:
// compact (see CompactFields) unless ?format=full asks for the verbose
// point. Clients reconnect by themselves (EventSource); the retry hint keeps
// that quick.
func (s *Server) stream(w http.ResponseWriter, r *http.Request) {
	full := r.URL.Query().Get("format") == "full"
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
	var enc compactEncoder
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
			b, err := s.event(&enc, &p, full)
			if err != nil {
				s.log().Error("encode point", "err", err)
				return
			}
			if _, err := w.Write(b); err != nil {
				return
			}
			fl.Flush()
		}
	}
}

// event renders one SSE event.
func (s *Server) event(enc *compactEncoder, p *ledger.Point, full bool) ([]byte, error) {
	v := s.verdictAt(p.Time)
	if v != nil {
		v.At = time.Time{} // the event's own time says when
		v.Groups = briefGroups(v.Groups)
	}
	b := fmt.Appendf(nil, "event: point\nid: %d\ndata: ", p.Time.UnixMilli())
	if full {
		body, err := json.Marshal(struct {
			*ledger.Point
			Verdict *diagnose.Verdict `json:"verdict"`
		}{p, v})
		if err != nil {
			return nil, fmt.Errorf("point at %s: %w", p.Time, err)
		}
		b = append(b, body...)
	} else {
		b = enc.encode(b, p, v)
	}
	return append(b, "\n\n"...), nil
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

// writeJSONGzip compresses when the client accepts it: an hour of history
// for 16 instances is megabytes of JSON that compresses about tenfold.
func writeJSONGzip(w http.ResponseWriter, r *http.Request, v any) {
	if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		writeJSON(w, v)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Encoding", "gzip")
	w.Header().Add("Vary", "Accept-Encoding")
	zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err := json.NewEncoder(zw).Encode(v); err != nil {
		slog.Default().Error("encode response", "err", err)
	}
	if err := zw.Close(); err != nil {
		slog.Default().Debug("finish gzip response", "err", err)
	}
}
